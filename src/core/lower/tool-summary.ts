/*
 * What lowering did with each declared tool. Its own file, free of imports, because the webview
 * (browser bundle) reads it through the traffic event types.
 */
export type ToolDisposition = 'lowered' | 'bridged' | 'passthrough' | 'dropped';

/** What lowering did with one declared tool (namespace members count one each), as the panel shows it. */
export interface ToolSummary {
  name: string;
  namespace: string | null;
  /** `function`, `custom`, or the hosted kind (`web_search`, `tool_search` …). */
  kind: string;
  /** Where Codex declared it: top-level `tools` or an `additional_tools` carrier (hoisted). */
  source: 'tools' | 'additional_tools';
  disposition: ToolDisposition;
  wireName: string | null;
  /** Why it was dropped or rewritten; null when lowered as declared. */
  reason: string | null;
}
