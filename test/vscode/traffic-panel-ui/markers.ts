/**
 * How the traffic panel UI test's two halves talk: the driver (inside the extension host) logs
 * `MARKER + JSON`, which reaches the runner through the workbench's codeAutomationLog; the runner
 * answers by writing files into the control folder the driver polls.
 */
export const UI_MARKER = 'FREEFORM_BRIDGE_TRAFFIC_UI::';

export type DriverPhase =
  /** The bridge runs and the first exchange (the malformed, HTML-laden apply_patch) is done: open the panel. */
  | { phase: 'first-exchange-done'; callId: string; payload: string }
  /** Every exchange is done and the export was checked: inspect the panel. */
  | { phase: 'traffic-done'; exchanges: number }
  /** The driver failed; the runner stops waiting. */
  | { phase: 'failed'; message: string };

/** Written by the runner once the panel is open and showed the first round trip: the driver then sends the live ones. */
export const SNAPSHOT_CHECKED_FILE = 'snapshot-checked';
/** Written by the runner when it is done with the workbench; the driver then returns. */
export const DONE_FILE = 'runner-done.json';

/** Environment variables the runner hands to the extension host through code-server. */
export const CONTROL_DIRECTORY_VARIABLE = 'FREEFORM_BRIDGE_UI_CONTROL';
export const CAPTURE_VARIABLE = 'FREEFORM_BRIDGE_UI_CAPTURE';

/** The lifted input of the first exchange: a patch the grammar rejects, full of markup and script. */
export const HOSTILE_PATCH = [
  '*** Begin Patch',
  '*** Update File: index.html',
  '<img src=x onerror=alert(1)><script>alert(2)</script>',
  '\t<b onmouseover="alert(3)">bold</b>   ',
  '*** End Patch',
].join('\n');
