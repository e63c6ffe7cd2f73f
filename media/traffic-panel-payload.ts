import type { BodyReference, TextView } from '../src/shared/webview-protocol.ts';
import { renderBodyActions } from './traffic-panel-actions.ts';
import { element, type PanelContext } from './traffic-panel-dom.ts';
import { plural } from './traffic-panel-format.ts';

/* Payloads: verbatim text with visible whitespace, a caption saying its size, and its actions. */

/** Characters a patch can hide: marked, but kept as themselves in the text. */
const INVISIBLE_CHARACTERS: ReadonlySet<string> = new Set(['\u00a0', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff']);

/**
 * Appends `text` so that the node's textContent is exactly `text`. With whitespace shown, line
 * ends, tabs, carriage returns, trailing blanks and invisible characters get their own spans, made
 * visible by CSS pseudo-elements (which are not part of the text, so copying stays verbatim).
 */
function appendVisibleText(target: HTMLElement, text: string, showWhitespace: boolean): void {
  if (!showWhitespace) {
    target.append(document.createTextNode(text));
    return;
  }
  const lines = text.split('\n');
  lines.forEach((line, lineIndex) => {
    const trailing = /[ \t]+$/.exec(line);
    const body = trailing ? line.slice(0, trailing.index) : line;
    appendMarkedRun(target, body, false);
    if (trailing) appendMarkedRun(target, trailing[0], true);
    if (lineIndex < lines.length - 1) target.append(element('span', { className: 'ws ws-newline', text: '\n' }));
  });
}

function appendMarkedRun(target: HTMLElement, run: string, trailing: boolean): void {
  let plain = '';
  const flush = (): void => {
    if (plain === '') return;
    target.append(trailing ? element('span', { className: 'ws ws-trailing', text: plain }) : document.createTextNode(plain));
    plain = '';
  };
  for (const character of run) {
    if (character === '\t') {
      flush();
      target.append(element('span', { className: trailing ? 'ws ws-tab ws-trailing' : 'ws ws-tab', text: '\t' }));
    } else if (character === '\r') {
      flush();
      target.append(element('span', { className: 'ws ws-cr', text: '\r' }));
    } else if (INVISIBLE_CHARACTERS.has(character)) {
      flush();
      const code = character.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0') ?? '';
      target.append(element('span', { className: 'ws ws-invisible', attributes: { title: `U+${code}` }, text: character }));
    } else {
      plain += character;
    }
  }
  flush();
}

function describeText(view: TextView): string {
  const lines = view.text === '' ? 0 : view.text.split('\n').length;
  const ending = view.truncated ? '' : view.text.endsWith('\n') ? ', ends with a line break' : ', no final line break';
  return `${plural(view.totalLength, 'character')}, ${plural(lines, 'line')}${ending}`;
}

/** A whole text kept verbatim (usage, a tool as sent), for `renderPayload`. */
export function wholeText(text: string): TextView {
  return { text, totalLength: text.length, truncated: false };
}

export function renderPayload(context: PanelContext, view: TextView, label: string, reference: BodyReference | null, options: { className?: string } = {}): HTMLElement {
  const showWhitespace = context.getState().ui.showWhitespace;
  const pre = element('pre', {
    className: `payload-text${showWhitespace ? ' show-whitespace' : ''}`,
    attributes: { tabindex: '0', role: 'region', 'aria-label': `${label}, ${describeText(view)}` },
  });
  appendVisibleText(pre, view.text, showWhitespace);
  const actions = element('span', { className: 'payload-actions' });
  if (reference) actions.append(...renderBodyActions(context, reference, label));
  return element(
    'figure',
    { className: `payload ${options.className ?? ''}`.trim() },
    element('figcaption', {}, element('span', { className: 'payload-label', text: label }), element('span', { className: 'payload-size', text: describeText(view) }), actions),
    view.truncated ? element('p', { className: 'truncated', text: `Showing the first ${view.text.length} of ${view.totalLength} characters; open it as a document for the whole text.` }) : null,
    pre,
  );
}
