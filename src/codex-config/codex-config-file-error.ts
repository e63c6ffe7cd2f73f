export type CodexConfigFileProblem =
  | 'symlink'
  | 'not-a-file'
  | 'not-a-directory'
  | 'unreadable'
  | 'not-utf8'
  | 'malformed'
  | 'unsafe-edit'
  | 'changed-since-plan'
  | 'foreign-owned'
  | 'needs-confirmation'
  | 'nothing-to-restore';

/** A file the writer refuses to touch; the message names the file and says what to do. */
export class CodexConfigFileError extends Error {
  readonly codexConfigFileProblem: CodexConfigFileProblem;
  readonly path: string;
  constructor(problem: CodexConfigFileProblem, path: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CodexConfigFileError';
    this.codexConfigFileProblem = problem;
    this.path = path;
  }
  static is(value: unknown): value is CodexConfigFileError {
    return typeof value === 'object' && value !== null && typeof (value as CodexConfigFileError).codexConfigFileProblem === 'string';
  }
}
