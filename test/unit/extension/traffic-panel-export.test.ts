import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { CURL_API_KEY_VARIABLE, quoteForShell, renderCurlCommand, renderJsonLines } from '../../../src/extension/traffic-panel-export.ts';
import { createLoweredRequest, HTML_PAYLOAD } from '../../support/traffic-events.ts';

const API_KEY = 'sk-live-abcdefghijklmnop';
const BRIDGE_TOKEN = 'ffb_0123456789abcdef';

describe('renderCurlCommand', () => {
  it('replays the lowered request with the API key read from the environment, never the key itself', () => {
    const request = createLoweredRequest([{ role: 'user', content: `it's ${API_KEY} and ${BRIDGE_TOKEN}; also ${HTML_PAYLOAD}` }]);
    const command = renderCurlCommand({ backendUrl: 'http://127.0.0.1:8000/v1/', request, usesApiKey: true, secrets: [API_KEY, BRIDGE_TOKEN] });
    assert.ok(!command.includes(API_KEY) && !command.includes(BRIDGE_TOKEN), command);
    assert.equal(command.split(' \\\n')[0], "curl -N 'http://127.0.0.1:8000/v1/chat/completions'");
    assert.ok(command.includes(`-H "Authorization: Bearer $${CURL_API_KEY_VARIABLE}"`));
  });

  it('leaves the Authorization header out when the backend needs no key, and -N out for a non-stream request', () => {
    const command = renderCurlCommand({ backendUrl: 'http://h/v1', request: createLoweredRequest([], { stream: false }), usesApiKey: false, secrets: [] });
    assert.ok(!/authorization/i.test(command));
    assert.ok(command.startsWith("curl 'http://h/v1/chat/completions'"));
  });

  it('quotes the body so a shell passes it through byte for byte', () => {
    const request = createLoweredRequest([{ role: 'user', content: `it's "quoted" $HOME \`id\` \\ ${HTML_PAYLOAD}` }]);
    const body = /--data-binary ('[\s\S]*')$/.exec(renderCurlCommand({ backendUrl: 'http://h/v1', request, usesApiKey: false, secrets: [] }))?.[1];
    assert.ok(body);
    const echoed = execFileSync('sh', ['-c', `printf '%s' ${body}`], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(echoed), request);
    assert.equal(quoteForShell("a'b"), `'a'\\''b'`);
  });
});

describe('renderJsonLines', () => {
  it('writes one JSON value per line, with secrets removed', () => {
    const text = renderJsonLines([{ input: 'line 1\nline 2' }, { key: API_KEY }], [API_KEY]);
    const lines = text.split('\n');
    assert.equal(lines.length, 3);
    assert.equal(lines[2], '');
    assert.deepEqual(JSON.parse(lines[0] ?? ''), { input: 'line 1\nline 2' });
    assert.deepEqual(JSON.parse(lines[1] ?? ''), { key: '[redacted]' });
  });
});
