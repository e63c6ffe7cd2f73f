/** Prefix of the one line the suite prints with its counts; the runner turns it into the closing line. */
export const RESULT_MARKER = 'FREEFORM_BRIDGE_VSCODE_RESULT ';
