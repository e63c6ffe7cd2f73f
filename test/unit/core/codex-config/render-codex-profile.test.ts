import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parse as parseToml } from 'smol-toml';
import {
  AZURE_URL_MARKERS,
  describeAzureUrlRisk,
  findAzureUrlMarker,
  providerIdForProfile,
  validateCodexProfileOptions,
  type CodexProfileOptions,
  type ValidCodexProfileOptions,
} from '../../../../src/core/codex-config/codex-profile-options.ts';
import { createCodexProfileEdits, createMakeDefaultEdits, renderCodexProfile, renderModelCatalog } from '../../../../src/core/codex-config/render-codex-profile.ts';
import { applyTomlEditsToData, editTomlText, type TomlEdit } from '../../../../src/core/codex-config/toml-edit.ts';
import { serializeTomlString, serializeTomlValue } from '../../../../src/core/codex-config/toml-value.ts';
import { InvalidRequestError } from '../../../../src/core/errors.ts';

const BASE_OPTIONS: CodexProfileOptions = {
  profile: 'freeform-bridge',
  providerId: 'freeform-bridge',
  baseUrl: 'http://127.0.0.1:18080/v1',
  model: 'qwen3-coder',
  toolSurface: 'freeform',
  token: 'token-123',
  contextWindow: null,
};

function options(overrides: Partial<CodexProfileOptions> = {}): CodexProfileOptions {
  return { ...BASE_OPTIONS, ...overrides };
}

/** The options as the renderers take them: checked once, by the validator. */
function valid(overrides: Partial<CodexProfileOptions> = {}): ValidCodexProfileOptions {
  return validateCodexProfileOptions(options(overrides));
}

/** Plain data for comparisons: smol-toml builds null-prototype objects. */
function parsePlain(text: string): Record<string, unknown> {
  return JSON.parse(JSON.stringify(parseToml(text))) as Record<string, unknown>;
}

function assertInvalid(run: () => unknown, pattern: RegExp): void {
  assert.throws(run, (error: unknown) => InvalidRequestError.is(error) && pattern.test(error.message));
}

describe('renderCodexProfile', () => {
  it('renders the freeform profile and its catalog', () => {
    const rendered = renderCodexProfile(valid({ contextWindow: 32768 }));
    assert.equal(rendered.profileFileName, 'freeform-bridge.config.toml');
    assert.equal(rendered.catalogFileName, 'freeform-bridge.model_catalog.json');
    assert.deepEqual(parsePlain(rendered.profileText), {
      model: 'qwen3-coder',
      model_provider: 'freeform-bridge',
      model_catalog_json: 'freeform-bridge.model_catalog.json',
      model_context_window: 32768,
      features: { unbounded_connection_retries: false },
      model_providers: {
        'freeform-bridge': {
          name: 'Freeform Bridge',
          base_url: 'http://127.0.0.1:18080/v1',
          wire_api: 'responses',
          experimental_bearer_token: 'token-123',
          model_catalog_url: 'http://127.0.0.1:18080/v1/codex/models?tool_surface=freeform',
          request_max_retries: 2,
          stream_max_retries: 1,
        },
      },
    });
    assert.match(rendered.profileText, /^experimental_bearer_token = "token-123"$/m);
    assert.doesNotMatch(rendered.profileText, /http_headers/);
    assert.match(rendered.profileText, /^# Codex profile written by `freeform-bridge codex-config`/);
    const catalog = JSON.parse(rendered.catalogText!) as { models: Array<Record<string, unknown>> };
    assert.equal(catalog.models.length, 1);
    const entry = catalog.models[0]!;
    for (const field of [
      'slug',
      'display_name',
      'supported_reasoning_levels',
      'shell_type',
      'visibility',
      'supported_in_api',
      'priority',
      'support_verbosity',
      'truncation_policy',
      'experimental_supported_tools',
      'base_instructions',
    ]) {
      assert.ok(field in entry, `catalog entry lacks required field ${field}`);
    }
    assert.equal(entry.slug, 'qwen3-coder');
    assert.equal(entry.apply_patch_tool_type, 'freeform');
    assert.equal(entry.context_window, 32768);
    assert.equal(entry.tool_mode, undefined);
    assert.equal(entry.use_responses_lite, undefined);
  });

  it('marks the code-mode entry with tool_mode and use_responses_lite', () => {
    const entry = (JSON.parse(renderModelCatalog(valid({ toolSurface: 'code-mode' }))) as { models: Array<Record<string, unknown>> }).models[0]!;
    assert.equal(entry.tool_mode, 'code_mode_only');
    assert.equal(entry.use_responses_lite, true);
    assert.equal(entry.apply_patch_tool_type, 'freeform');
    assert.equal('context_window' in entry, false);
  });

  it('writes no catalog for the functions surface but keeps a known context window in the profile', () => {
    const rendered = renderCodexProfile(valid({ toolSurface: 'functions', contextWindow: 65536, token: null }));
    assert.equal(rendered.catalogFileName, null);
    assert.equal(rendered.catalogText, null);
    const data = parsePlain(rendered.profileText);
    assert.equal(data.model_catalog_json, undefined);
    assert.equal(data.model_context_window, 65536);
    const provider = (data.model_providers as Record<string, Record<string, unknown>>)['freeform-bridge']!;
    assert.equal(provider.http_headers, undefined);
    // Without a bridge token Codex still needs a bearer to fetch the catalog at all.
    assert.equal(provider.experimental_bearer_token, 'freeform-bridge-needs-no-token');
    assert.equal(provider.model_catalog_url, 'http://127.0.0.1:18080/v1/codex/models?tool_surface=functions');
    assert.doesNotMatch(rendered.profileText, /bridge token/i);
  });

  it('is a fixed point of its own edits (a second run changes nothing)', () => {
    for (const toolSurface of ['functions', 'freeform', 'code-mode'] as const) {
      const rendered = renderCodexProfile(valid({ toolSurface, contextWindow: 8192 }));
      const edits = createCodexProfileEdits(valid({ toolSurface, contextWindow: 8192 }), parsePlain(rendered.profileText));
      assert.equal(editTomlText(rendered.profileText, edits), rendered.profileText);
    }
  });

  it('escapes values instead of concatenating them', () => {
    const rendered = renderCodexProfile(valid({ model: 'we"ird\\model\u00e9', displayName: 'My "Bridge"' }));
    const data = parsePlain(rendered.profileText);
    assert.equal(data.model, 'we"ird\\model\u00e9');
    assert.equal((data.model_providers as Record<string, Record<string, unknown>>)['freeform-bridge']!.name, 'My "Bridge"');
  });
});

describe('validateCodexProfileOptions', () => {
  it('normalises a trailing slash and accepts https', () => {
    assert.equal(validateCodexProfileOptions(options({ baseUrl: 'https://bridge.example:8443/v1/' })).baseUrl, 'https://bridge.example:8443/v1');
  });
  it('refuses bad profile names', () => {
    assertInvalid(() => validateCodexProfileOptions(options({ profile: '../evil' })), /profile name/);
    assertInvalid(() => validateCodexProfileOptions(options({ profile: '' })), /profile name/);
    assertInvalid(() => validateCodexProfileOptions(options({ profile: 'a b' })), /profile name/);
  });
  it('refuses base URLs Codex cannot use', () => {
    assertInvalid(() => validateCodexProfileOptions(options({ baseUrl: 'http://127.0.0.1:18080' })), /must end in \/v1/);
    assertInvalid(() => validateCodexProfileOptions(options({ baseUrl: 'ftp://127.0.0.1/v1' })), /http:\/\/ or https:\/\//);
    assertInvalid(() => validateCodexProfileOptions(options({ baseUrl: 'not a url' })), /not a valid URL/);
    assertInvalid(() => validateCodexProfileOptions(options({ baseUrl: 'http://user:pw@127.0.0.1/v1' })), /user name or password/);
    assertInvalid(() => validateCodexProfileOptions(options({ baseUrl: 'http://127.0.0.1/v1?x=1' })), /query or fragment/);
  });
  it('refuses an empty model, a token that would break the header, a bad context window, reserved names', () => {
    assertInvalid(() => validateCodexProfileOptions(options({ model: '' })), /model name/);
    assertInvalid(() => validateCodexProfileOptions(options({ model: ' qwen' })), /model name/);
    for (const model of ['qwen\u001b]0;x\u0007', 'qwen\u007f', 'qwen\u009b2J']) assertInvalid(() => validateCodexProfileOptions(options({ model })), /model name .* control characters/);
    assertInvalid(() => validateCodexProfileOptions(options({ token: 'a b' })), /token/);
    assertInvalid(() => validateCodexProfileOptions(options({ token: 'a\r\nX-Evil: 1' })), /token/);
    assertInvalid(() => validateCodexProfileOptions(options({ contextWindow: 0 })), /context window/);
    assertInvalid(() => validateCodexProfileOptions(options({ contextWindow: 1.5 })), /context window/);
    assertInvalid(() => validateCodexProfileOptions(options({ providerId: 'ollama' })), /reserved/);
    assertInvalid(() => validateCodexProfileOptions(options({ displayName: 'OpenAI' })), /OpenAI/);
  });
  it('never takes a provider id or name Codex treats as OpenAI or Azure, in any case', () => {
    for (const providerId of ['openai', 'OpenAI', 'OPENAI', 'azure', 'Azure', 'AZURE']) {
      assertInvalid(() => validateCodexProfileOptions(options({ providerId })), /Codex treats a provider named '(openai|azure)' \(in any case\) as OpenAI's own service/);
    }
    for (const displayName of ['openai', 'Azure', ' AZURE ']) assertInvalid(() => validateCodexProfileOptions(options({ displayName })), /Codex treats such a provider as OpenAI's own service/);
    assert.equal(validateCodexProfileOptions(options({ providerId: 'freeform-bridge-azure' })).providerId, 'freeform-bridge-azure');
    assert.equal(providerIdForProfile('azure'), 'freeform-bridge-azure');
    assert.equal(providerIdForProfile('OpenAI'), 'freeform-bridge-OpenAI');
  });
  it('finds the base URL markers that make Codex treat a provider as Azure', () => {
    const cases: Array<[string, string | null]> = [
      ['https://mine.openai.azure.com/openai/v1', 'openai.azure.'],
      ['https://x.CognitiveServices.Azure.com/v1', 'cognitiveservices.azure.'],
      ['https://x.aoai.azure.com/v1', 'aoai.azure.'],
      ['https://gateway.azure-api.net/v1', 'azure-api.'],
      ['https://edge.azurefd.net/v1', 'azurefd.'],
      ['https://acct.blob.core.windows.net/openai/v1', 'windows.net/openai'],
      ['http://127.0.0.1:18080/v1', null],
      ['https://azure-bridge.example.com/v1', null],
    ];
    for (const [url, marker] of cases) assert.equal(findAzureUrlMarker(url), marker, url);
    assert.deepEqual([...AZURE_URL_MARKERS], ['openai.azure.', 'cognitiveservices.azure.', 'aoai.azure.', 'azure-api.', 'azurefd.', 'windows.net/openai']);
    assert.match(describeAzureUrlRisk('https://mine.openai.azure.com/v1') ?? '', /contains 'openai\.azure\.', so Codex will treat this provider as Azure OpenAI and ask for remote compaction/);
    assert.equal(describeAzureUrlRisk('http://127.0.0.1:18080/v1'), null);
  });
  it('derives provider ids that never collide with Codex built-ins', () => {
    assert.equal(providerIdForProfile('freeform-bridge'), 'freeform-bridge');
    assert.equal(providerIdForProfile('ollama'), 'freeform-bridge-ollama');
  });
});

describe('TOML serialisation', () => {
  it('escapes quotes, backslashes and control characters', () => {
    assert.equal(serializeTomlString('a"b\\c\nd\te\u0001f\u007f'), '"a\\"b\\\\c\\nd\\te\\u0001f\\u007F"');
    assert.equal(serializeTomlString('caf\u00e9 \u{1F600}'), '"caf\u00e9 \u{1F600}"');
  });
  it('renders arrays and inline tables with quoted keys', () => {
    assert.equal(serializeTomlValue(['a', 1, true]), '["a", 1, true]');
    assert.equal(serializeTomlValue({ 'X-Header': 'v', 'a b': 'c' }), '{ "X-Header" = "v", "a b" = "c" }');
    assert.equal(serializeTomlValue({}), '{}');
  });
  it('refuses floats and lone surrogates', () => {
    assertInvalid(() => serializeTomlValue(1.5), /integers/);
    assertInvalid(() => serializeTomlString('\uD800'), /surrogate/);
  });
  it('round-trips any well-formed string through a real TOML parser', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), (text, binary) => {
        const wellFormed = binary.replace(/[\uD800-\uDFFF]/g, '');
        for (const value of [text, wellFormed]) {
          assert.equal((parseToml(`v = ${serializeTomlString(value)}\n`) as { v: string }).v, value);
          assert.equal(Object.keys(parseToml(`${serializeTomlValue({ [value]: 1 }).slice(2, -2)}\n`))[0], value);
        }
      }),
    );
  });
});

describe('editTomlText', () => {
  const set = (table: string[], key: string, value: string | number): TomlEdit => ({ kind: 'set', table, key, value });

  it('replaces a value in place and keeps its comment and every other byte', () => {
    const text = '# top\nmodel = "gpt-5.5"   # the best one\n\napproval_policy = "on-request"\n';
    assert.equal(editTomlText(text, [set([], 'model', 'qwen3-coder')]), '# top\nmodel = "qwen3-coder"   # the best one\n\napproval_policy = "on-request"\n');
  });

  it('adds a top-level key after the last top-level key, not inside a table', () => {
    const text = 'model = "a"\n\n[tui]\nnotifications = true\n';
    assert.equal(editTomlText(text, [set([], 'model_provider', 'p')]), 'model = "a"\nmodel_provider = "p"\n\n[tui]\nnotifications = true\n');
  });

  it('puts a top-level key above the comment block of the first table when there is none yet', () => {
    const text = '# my config\n\n# the TUI\n[tui]\nnotifications = true\n';
    assert.equal(editTomlText(text, [set([], 'model', 'q')]), '# my config\n\nmodel = "q"\n\n# the TUI\n[tui]\nnotifications = true\n');
  });

  it('adds keys to an existing table after its last key and appends a missing table', () => {
    const text = '[model_providers.mine]\nname = "Mine"\n\n[other]\nx = 1\n';
    const edited = editTomlText(text, [set(['model_providers', 'mine'], 'wire_api', 'responses'), set(['model_providers', 'new'], 'name', 'New')]);
    assert.equal(edited, '[model_providers.mine]\nname = "Mine"\nwire_api = "responses"\n\n[other]\nx = 1\n\n[model_providers.new]\nname = "New"\n');
  });

  it('keeps CRLF line endings for inserted lines', () => {
    const text = 'model = "a"\r\n[x]\r\ny = 1\r\n';
    const edited = editTomlText(text, [set([], 'model_provider', 'p'), set(['z'], 'k', 'v')]);
    assert.equal(edited, 'model = "a"\r\nmodel_provider = "p"\r\n[x]\r\ny = 1\r\n\r\n[z]\r\nk = "v"\r\n');
    assert.doesNotMatch(edited.replace(/\r\n/g, ''), /\n/);
  });

  it('keeps CRLF even after a removal emptied the text', () => {
    const edits: TomlEdit[] = [{ kind: 'remove', table: [], key: 'model' }, set([], 'model', 0)];
    assert.equal(editTomlText('model = "a"\r\n', edits), 'model = 0\r\n');
  });

  it('keeps a byte-order mark first', () => {
    const edited = editTomlText('\uFEFF[x]\ny = 1\n', [set([], 'model', 'q')]);
    assert.ok(edited.startsWith('\uFEFFmodel = "q"\n'));
  });

  it('is not fooled by headers and keys inside multi-line strings and arrays', () => {
    const text = [
      'notify = [',
      '  "a", # [model_providers.fake]',
      '  "model = \\"x\\"",',
      ']',
      'instructions = """',
      '[model_providers.fake]',
      'model = "not me"',
      '"""',
      "literal = '''",
      "model = 'nor me'",
      "'''",
      'when = 1979-05-27 07:32:00Z # a date with a space',
      '"model" = "quoted key"',
      '',
    ].join('\n');
    const edited = editTomlText(text, [set([], 'model', 'q'), set([], 'when_else', 1)]);
    assert.equal(edited, text.replace('"model" = "quoted key"\n', '"model" = "q"\nwhen_else = 1\n'));
  });

  it('edits tables written with dotted keys through dotted keys', () => {
    const text = 'model_providers.freeform-bridge.name = "Old"\n[tui]\nx = 1\n';
    const edited = editTomlText(text, [set(['model_providers', 'freeform-bridge'], 'name', 'New'), set(['model_providers', 'freeform-bridge'], 'wire_api', 'responses')]);
    assert.equal(edited, 'model_providers.freeform-bridge.name = "New"\nmodel_providers.freeform-bridge.wire_api = "responses"\n[tui]\nx = 1\n');
    assert.deepEqual(parsePlain(edited), { model_providers: { 'freeform-bridge': { name: 'New', wire_api: 'responses' } }, tui: { x: 1 } });
  });

  it('adds a header for a table so far only implied by a sub-table', () => {
    const text = '[model_providers.freeform-bridge.extra]\nk = 1\n';
    const edited = editTomlText(text, [set(['model_providers', 'freeform-bridge'], 'name', 'N')]);
    assert.equal(edited, '[model_providers.freeform-bridge.extra]\nk = 1\n\n[model_providers.freeform-bridge]\nname = "N"\n');
    assert.deepEqual(parsePlain(edited), { model_providers: { 'freeform-bridge': { extra: { k: 1 }, name: 'N' } } });
  });

  it('refuses to add into a table written as an inline value', () => {
    const text = 'model_providers = { other = { name = "x" } }\n';
    assertInvalid(() => editTomlText(text, [set(['model_providers', 'freeform-bridge'], 'name', 'n')]), /inline value/);
  });

  it('removes a key with its line only', () => {
    const text = 'model = "a"\nmodel_catalog_json = "c.json" # ours\nother = 1\n';
    assert.equal(editTomlText(text, [{ kind: 'remove', table: [], key: 'model_catalog_json' }]), 'model = "a"\nother = 1\n');
    assert.equal(editTomlText(text, [{ kind: 'remove', table: [], key: 'absent' }]), text);
  });

  it('starts an empty document cleanly and ends files that lack a final newline', () => {
    assert.equal(editTomlText('', [set([], 'a', 1), set(['t'], 'b', 2)]), 'a = 1\n\n[t]\nb = 2\n');
    assert.equal(editTomlText('x = 1', [set(['t'], 'b', 2)]), 'x = 1\n\n[t]\nb = 2\n');
  });
});

describe('profile and make-default edits on existing documents', () => {
  it('keeps the user\'s extra headers and moves the token out of Authorization into experimental_bearer_token', () => {
    const existing = { model_providers: { 'freeform-bridge': { http_headers: { authorization: 'Bearer old', 'X-Team': 'a' } } } };
    const edits = createCodexProfileEdits(valid({ token: 'new-token' }), existing);
    const headersEdit = edits.find((edit) => edit.key === 'http_headers');
    assert.deepEqual(headersEdit, { kind: 'set', table: ['model_providers', 'freeform-bridge'], key: 'http_headers', value: { 'X-Team': 'a' } });
    assert.deepEqual(edits.find((edit) => edit.key === 'experimental_bearer_token'), { kind: 'set', table: ['model_providers', 'freeform-bridge'], key: 'experimental_bearer_token', value: 'new-token' });
    const withoutToken = createCodexProfileEdits(valid({ token: null }), { model_providers: { 'freeform-bridge': { http_headers: { Authorization: 'Bearer old' } } } });
    assert.deepEqual(withoutToken.find((edit) => edit.key === 'http_headers'), { kind: 'remove', table: ['model_providers', 'freeform-bridge'], key: 'http_headers' });
  });

  it('sets the retry settings once: a value the user put in the profile stays, a value of the wrong type is replaced', () => {
    const mine = { features: { unbounded_connection_retries: true }, model_providers: { 'freeform-bridge': { request_max_retries: 6, stream_max_retries: 3 } } };
    const keys = (edits: readonly { table: readonly string[]; key: string }[]): string[] => edits.map((edit) => [...edit.table, edit.key].join('.'));
    const kept = keys(createCodexProfileEdits(valid(), mine));
    for (const key of ['features.unbounded_connection_retries', 'model_providers.freeform-bridge.request_max_retries', 'model_providers.freeform-bridge.stream_max_retries']) {
      assert.ok(!kept.includes(key), `${key} is left as the user set it`);
    }
    const wrongType = createCodexProfileEdits(valid(), { model_providers: { 'freeform-bridge': { request_max_retries: 'many' } } });
    assert.deepEqual(wrongType.find((edit) => edit.key === 'request_max_retries'), { kind: 'set', table: ['model_providers', 'freeform-bridge'], key: 'request_max_retries', value: 2 });
    assert.ok(!keys(createMakeDefaultEdits(valid(), null)).includes('features.unbounded_connection_retries'), 'config.toml never gets the global feature switch');
  });

  it('the profile\'s catalog entry is text-only, as the live catalog is for a backend that reports no vision', () => {
    const catalog = JSON.parse(renderModelCatalog(valid())) as { models: Array<{ input_modalities: string[] }> };
    assert.deepEqual(catalog.models[0]!.input_modalities, ['text']);
  });

  it('switching to the functions surface removes the catalog reference', () => {
    const freeform = renderCodexProfile(valid()).profileText;
    const edited = editTomlText(freeform, createCodexProfileEdits(valid({ toolSurface: 'functions' }), parsePlain(freeform)));
    assert.equal(parsePlain(edited).model_catalog_json, undefined);
    // Only the key's line goes; the header comment is the user's to keep now.
    assert.equal(
      edited,
      freeform.replace('model_catalog_json = "freeform-bridge.model_catalog.json"\n', '').replace('?tool_surface=freeform"', '?tool_surface=functions"'),
    );
  });

  it('make-default sets model, provider and the provider table with its catalog URL, never profile, a catalog file or a global context window', () => {
    const edits = createMakeDefaultEdits(valid({ contextWindow: 4096, toolSurface: 'code-mode' }), null);
    assert.deepEqual(
      edits.map((edit) => [edit.kind, [...edit.table, edit.key].join('.')]),
      [
        ['set', 'model'],
        ['set', 'model_provider'],
        ['set', 'model_providers.freeform-bridge.name'],
        ['set', 'model_providers.freeform-bridge.base_url'],
        ['set', 'model_providers.freeform-bridge.wire_api'],
        ['set', 'model_providers.freeform-bridge.experimental_bearer_token'],
        ['set', 'model_providers.freeform-bridge.model_catalog_url'],
        ['remove', 'model_providers.freeform-bridge.http_headers'],
        ['set', 'model_providers.freeform-bridge.request_max_retries'],
        ['set', 'model_providers.freeform-bridge.stream_max_retries'],
      ],
    );
    assert.deepEqual(
      edits.find((edit) => edit.key === 'model_catalog_url'),
      { kind: 'set', table: ['model_providers', 'freeform-bridge'], key: 'model_catalog_url', value: 'http://127.0.0.1:18080/v1/codex/models?tool_surface=code-mode' },
    );
  });

  it('a tricky config.toml gets exactly the make-default edits and keeps every other byte', () => {
    const original = [
      '# My Codex config',
      'model = "gpt-5.5"   # the best one',
      'approval_policy = "on-request"',
      'notify = ["notify-send", "Codex"]',
      '',
      '# providers I use',
      '[model_providers.azure]',
      'name = "Azure"',
      'base_url = "https://example.openai.azure.com/openai"',
      'env_key = "AZURE_OPENAI_API_KEY"',
      'query_params = { "api-version" = "2025-04-01-preview" }',
      '',
      '[mcp_servers.docs]',
      'command = "npx"',
      'args = [',
      '  "-y",   # comment inside an array',
      '  "docs-server",',
      ']',
      'env = { "DOCS_TOKEN" = "abc", NESTED = "x" }',
      '',
    ].join('\r\n');
    const edits = createMakeDefaultEdits(valid(), parsePlain(original));
    const edited = editTomlText(original, edits);
    assert.deepEqual(parsePlain(edited), applyTomlEditsToData(parsePlain(original), edits));
    const expected = original
      .replace('model = "gpt-5.5"   # the best one', 'model = "qwen3-coder"   # the best one')
      .replace('notify = ["notify-send", "Codex"]\r\n', 'notify = ["notify-send", "Codex"]\r\nmodel_provider = "freeform-bridge"\r\n')
      .concat(
        [
          '',
          '[model_providers.freeform-bridge]',
          'name = "Freeform Bridge"',
          'base_url = "http://127.0.0.1:18080/v1"',
          'wire_api = "responses"',
          'experimental_bearer_token = "token-123"',
          'model_catalog_url = "http://127.0.0.1:18080/v1/codex/models?tool_surface=freeform"',
          'request_max_retries = 2',
          'stream_max_retries = 1',
          '',
        ].join('\r\n'),
      );
    assert.equal(edited, expected);
    assert.equal(editTomlText(edited, createMakeDefaultEdits(valid(), parsePlain(edited))), edited);
  });
});

describe('editTomlText on generated documents', () => {
  const topLevelFragments = [
    '# a comment line',
    'model = "gpt-5.5" # trailing comment',
    'notify = [\n  "a", # inside\n  "b",\n]',
    'instructions = """\n[fake]\nmodel = "not a key"\n"""',
    "'quoted key' = 1",
    'model_providers.dotted.name = "D"',
    'when = 1979-05-27 07:32:00Z',
    '',
  ];
  const tableFragments = [
    '[model_providers.azure]\nname = "Azure" # c\nquery_params = { "api-version" = "1" }',
    '[tui]\nnotifications = true',
    '# about ours\n[model_providers.freeform-bridge]\nname = "Old"\nenv_key = "K"',
    '[model_providers.freeform-bridge.extra]\nk = 1',
    '[[array]]\nx = 1',
  ];
  const targets: Array<[string[], string]> = [
    [[], 'model'],
    [[], 'model_provider'],
    [[], 'model_context_window'],
    [['model_providers', 'freeform-bridge'], 'name'],
    [['model_providers', 'freeform-bridge'], 'http_headers'],
    [['model_providers', 'azure'], 'base_url'],
    [['model_providers', 'dotted'], 'wire_api'],
    [['tui'], 'notifications'],
  ];
  const editArbitrary = fc.oneof(
    fc.record({
      kind: fc.constant('set' as const),
      target: fc.constantFrom(...targets),
      value: fc.oneof(fc.string(), fc.integer(), fc.dictionary(fc.string({ minLength: 1 }), fc.string(), { maxKeys: 2 })),
    }),
    fc.record({ kind: fc.constant('remove' as const), target: fc.constantFrom(...targets) }),
  );

  it('either refuses or yields exactly the original document plus the edits, in the file\'s line endings', () => {
    fc.assert(
      fc.property(
        fc.shuffledSubarray(topLevelFragments),
        fc.shuffledSubarray(tableFragments),
        fc.boolean(),
        fc.array(editArbitrary, { maxLength: 6 }),
        (topLevel, tables, crlf, generatedEdits) => {
          const newline = crlf ? '\r\n' : '\n';
          const original = `${[...topLevel, ...tables].join('\n')}\n`.replace(/\n/g, newline);
          const edits: TomlEdit[] = generatedEdits.map((edit) =>
            edit.kind === 'set'
              ? { kind: 'set', table: edit.target[0], key: edit.target[1], value: edit.value }
              : { kind: 'remove', table: edit.target[0], key: edit.target[1] },
          );
          let edited: string;
          try {
            edited = editTomlText(original, edits);
          } catch (error) {
            assert.ok(InvalidRequestError.is(error) && error.code === 'toml_edit_unsupported', String(error));
            return;
          }
          assert.deepEqual(parsePlain(edited), JSON.parse(JSON.stringify(applyTomlEditsToData(parsePlain(original), edits))));
          if (crlf) assert.doesNotMatch(edited, /(^|[^\r])\n/);
          else assert.doesNotMatch(edited, /\r/);
        },
      ),
      { numRuns: 500 },
    );
  });
});
