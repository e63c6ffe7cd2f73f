import { startE2eSession, chatRequests, describeRun, lastMessage, loweredToolNames } from './codex-session.ts';
async function main(): Promise<void> {
const surface = (process.argv[2] ?? 'functions') as 'functions';
const session = await startE2eSession({
  profile: 'vllm-hermes', surface, keepScratch: true,
  responder: (request) => {
    const last = lastMessage(request);
    console.error('REQ', request.id, 'last role', last?.role, JSON.stringify(last).slice(0, 300));
    console.error('TOOLS', loweredToolNames(request).join(','));
    if (last?.role === 'user') return { toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo hello-from-exec', login: false, yield_time_ms: 250 } }] };
    return { text: 'done: it printed hello' };
  },
});
const run = await session.runCodex('run echo');
console.log(describeRun(run));
console.log(JSON.stringify(run.agentMessages), run.commands);
console.log(chatRequests(session.backend).length, session.scratch);
await session.close();

}
void main();
