/*
 * Model ids as engines report them are often paths or hub ids (llama.cpp serves
 * `/models/Qwen3-Coder-30B-A3B-Instruct-Q4_K_M.gguf`, Ollama `hf.co/unsloth/…-GGUF:Q4_K_M`, vLLM
 * `Qwen/Qwen3-Coder-30B-A3B-Instruct`). In a narrow column the folder or the organisation is all that
 * shows, and it is the same for every model. The short name keeps what tells models apart: the last
 * path segment with its quantisation tag, without the `.gguf` extension, a shard suffix or a `-GGUF`
 * repository suffix. The full id stays on hover and in the detail.
 */

const SHARD_SUFFIX = /-\d{5}-of-\d{5}$/i;
const GGUF_MARK = /(\.gguf|[-_.]gguf)$/i;

export function shortModelName(id: string): string {
  const trimmed = id.trim();
  const last = trimmed.split(/[\\/]+/).filter((segment) => segment !== '').at(-1);
  if (last === undefined) return trimmed;
  // An Ollama or hub tag (`:Q4_K_M`, `:30b`) tells quantisations apart: kept.
  const colon = last.lastIndexOf(':');
  const tag = colon > 0 ? last.slice(colon) : '';
  let base = colon > 0 ? last.slice(0, colon) : last;
  base = base.replace(GGUF_MARK, '').replace(SHARD_SUFFIX, '').replace(GGUF_MARK, '');
  return base === '' ? last : `${base}${tag}`;
}

/**
 * Short names for several ids at once: an id whose short name another id shares (the same file in two
 * folders, the same repository from two organisations) keeps its full id, so two models never read alike.
 */
export function shortModelNames(ids: Iterable<string>): Map<string, string> {
  const short = new Map([...new Set(ids)].map((id) => [id, shortModelName(id)]));
  const holders = new Map<string, number>();
  for (const name of short.values()) holders.set(name, (holders.get(name) ?? 0) + 1);
  return new Map([...short].map(([id, name]) => [id, (holders.get(name) ?? 0) > 1 ? id : name]));
}
