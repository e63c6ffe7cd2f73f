/** The OpenAI error body Codex prints verbatim for a 400. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function createOpenAiErrorBody(
  message: string,
  fields: { type?: string; param?: string | null; code?: string | null } = {},
): OpenAiErrorBody {
  return {
    error: {
      message,
      type: fields.type ?? 'invalid_request_error',
      param: fields.param ?? null,
      code: fields.code ?? null,
    },
  };
}
