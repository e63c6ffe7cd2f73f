/**
 * Reads a fetch Response's body as text, up to `maxBytes`; past it, the body is cancelled (the
 * connection with it) and the promise rejects naming the cap. For answers from programs the bridge
 * does not control (a backend's model list, whatever holds a port): none may make it hold more.
 */
export async function readBoundedResponseText(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw new Error(`its answer is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
