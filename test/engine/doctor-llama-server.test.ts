import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DoctorReport } from '../../src/core/doctor/diagnose.ts';
import { summariseDoctorReport } from '../../src/core/doctor/render-doctor-report.ts';
import { runEngineDoctor } from '../../src/server/engine-doctor.ts';
import { findEngineKit, reportMissingEngineKit, startLlamaServer, type LlamaServerOptions, type RunningLlamaServer } from './llama-server.ts';

/**
 * The engine doctor against the real llama.cpp `llama-server`: started as the kit starts it, with a
 * context too small for Codex, with a chat template that has no tool support, and without Jinja. Each
 * failure must be named with its fix before any Codex turn.
 */

const lookup = findEngineKit();
const running: RunningLlamaServer[] = [];
after(async () => {
  for (const server of running) await server.stop();
});

async function doctor(options: Omit<LlamaServerOptions, 'format'>): Promise<DoctorReport> {
  const server = await startLlamaServer(lookup.kit!, { format: 'hermes', ...options });
  running.push(server);
  try {
    return await runEngineDoctor({ backendUrl: server.backendUrl, apiKey: null, configuredModel: null, probe: true });
  } finally {
    await server.stop();
  }
}

function finding(report: DoctorReport, check: string): DoctorReport['findings'][number] {
  const found = report.findings.find((entry) => entry.check === check);
  assert.ok(found, `no ${check} finding in ${JSON.stringify(report.findings)}`);
  return found;
}

if (lookup.kit === null) {
  reportMissingEngineKit('engine doctor on llama-server', lookup.missing);
} else {
  describe('engine doctor on llama-server', { timeout: 180_000 }, () => {
    it('started as the kit starts it, with the context Codex needs: a green report', async () => {
      const report = await doctor({ contextSize: 32_768 });
      assert.equal(report.engine, 'llamacpp');
      assert.match(report.version ?? '', /^b\d+-[0-9a-f]+$/);
      assert.equal(report.contextWindow, 32_768);
      assert.equal(report.contextWindowSource, 'props default_generation_settings.n_ctx');
      assert.equal(report.codexWouldFail, false, JSON.stringify(report.findings));
      assert.equal(report.worst, null, JSON.stringify(report.findings));
      for (const check of ['Engine', 'Model', 'Context', 'Tool template', 'Tool call', 'Tool call, streamed', 'Reasoning effort', 'Grammar enforcement']) assert.equal(finding(report, check).severity, 'ok', check);
    });

    it('CTX=4096: the context is a FAIL with the -c to copy', async () => {
      const report = await doctor({ contextSize: 4096 });
      assert.equal(report.codexWouldFail, true);
      const context = finding(report, 'Context');
      assert.equal(context.severity, 'error');
      assert.match(context.summary, /^4096 tokens/);
      assert.match(context.fix ?? '', /llama-server .*-c 32768/);
      // Everything else still works: the report names the one cause.
      assert.equal(finding(report, 'Tool call').severity, 'ok');
    });

    it('--chat-template chatml: /props shows the override, the doctor names it and says to drop it, the probes prove it', async () => {
      const report = await doctor({ extraArguments: ['--chat-template', 'chatml'] });
      assert.equal(report.codexWouldFail, true);
      const template = finding(report, 'Tool template');
      assert.equal(template.severity, 'error');
      assert.match(template.summary, /--chat-template chatml.*chat_template_caps\.supports_tools/);
      for (const entry of [template, finding(report, 'Tool call'), finding(report, 'Tool call, streamed')]) {
        assert.match(entry.fix ?? '', /without --chat-template chatml/, entry.check);
        assert.doesNotMatch(entry.fix ?? '', /--chat-template-file/, entry.check);
      }
      for (const check of ['Tool call', 'Tool call, streamed']) {
        assert.equal(finding(report, check).severity, 'error', check);
        assert.match(finding(report, check).summary, /came back as text, not as a tool call/);
      }
    });

    it("serve's start-up line (the quick check) names every problem: the small context and the override", async () => {
      const server = await startLlamaServer(lookup.kit!, { format: 'hermes', contextSize: 8192, extraArguments: ['--chat-template', 'chatml'] });
      running.push(server);
      try {
        const line = summariseDoctorReport(await runEngineDoctor({ backendUrl: server.backendUrl, apiKey: null, configuredModel: null, probe: false }));
        assert.match(line, /Tool template: llama-server runs with --chat-template chatml[^|]*; fix: restart llama-server without --chat-template chatml/);
        assert.match(line, /Context: 8192 tokens[^|]*; fix: restart llama-server with a longer context/);
      } finally {
        await server.stop();
      }
    });

    it('without Jinja (--no-jinja): the probes get the engine\'s refusal, and the fix is --jinja', async () => {
      const report = await doctor({ extraArguments: ['--no-jinja'] });
      assert.equal(report.codexWouldFail, true);
      assert.match(finding(report, 'Tool call').summary, /tools param requires --jinja flag/);
      assert.match(finding(report, 'Tool call').fix ?? '', /restart llama-server with --jinja/);
    });
  });
}
