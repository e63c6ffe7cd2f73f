import type { WebviewToHostMessage } from '../src/shared/webview-protocol.ts';
import type { PanelAction, PanelState } from './traffic-panel-state.ts';

/*
 * Small DOM helpers for the traffic panel. Every payload is model output, i.e. attacker-controlled:
 * these helpers only ever put it on the page as text (createTextNode / textContent), never as
 * markup, and no attribute that loads or runs anything is set from it.
 */

/** What every part of the panel gets: the current state, the reducer and the host. */
export interface PanelContext {
  getState(): PanelState;
  dispatch(action: PanelAction): void;
  post(message: WebviewToHostMessage): void;
}

export type Child = Node | string | null | undefined | false;

export function element<K extends keyof HTMLElementTagNameMap>(tag: K, options: { className?: string; attributes?: Record<string, string>; text?: string } = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  for (const [name, value] of Object.entries(options.attributes ?? {})) node.setAttribute(name, value);
  if (options.text !== undefined) node.textContent = options.text;
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

export function button(label: string, onClick: () => void, options: { className?: string; ariaLabel?: string; title?: string } = {}): HTMLButtonElement {
  const attributes: Record<string, string> = { type: 'button' };
  if (options.ariaLabel) attributes['aria-label'] = options.ariaLabel;
  if (options.title) attributes.title = options.title;
  const node = element('button', { className: options.className ?? 'action', attributes, text: label });
  node.addEventListener('click', onClick);
  return node;
}
