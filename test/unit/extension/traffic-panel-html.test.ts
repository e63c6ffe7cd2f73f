import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderTrafficPanelHtml } from '../../../src/extension/traffic-panel-html.ts';

describe('renderTrafficPanelHtml', () => {
  const html = renderTrafficPanelHtml({
    nonce: 'bm9uY2Uv+w==',
    cspSource: 'https://file+.vscode-resource.vscode-cdn.net',
    scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/media/traffic-panel.js',
    styleUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/media/traffic-panel.css',
  });

  it('declares a CSP that allows nothing but the nonce script and the extension\'s own styles', () => {
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1];
    assert.equal(
      csp,
      "default-src 'none'; style-src https://file+.vscode-resource.vscode-cdn.net; script-src 'nonce-bm9uY2Uv+w=='; img-src 'none'; connect-src 'none'; frame-src 'none'; form-action 'none'; base-uri 'none'",
    );
    assert.doesNotMatch(csp ?? '', /unsafe-inline|unsafe-eval|\*|https?:\/\/(?!file\+\.vscode-resource)/);
  });

  it('loads exactly one script, by nonce, from the bundle folder, and has no inline script or style', () => {
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    assert.deepEqual(scripts, ['<script nonce="bm9uY2Uv+w==" src="https://file+.vscode-resource.vscode-cdn.net/ext/dist/media/traffic-panel.js">']);
    assert.match(html, /<script[^>]*><\/script>/, 'the script element is empty');
    assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
  });
});
