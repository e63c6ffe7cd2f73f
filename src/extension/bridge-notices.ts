import * as vscode from 'vscode';
import { offerConfigRewrite } from './codex-config-rewrite-offer.ts';
import type { ExtensionServices } from './extension-services.ts';
import { openSetting } from './setting-editor.ts';

/* What the running bridge tells the user without being asked. */

/** This window took over the shared bridge from one that closed; a moved port is offered a config rewrite. */
export function watchForTakeOver({ controller, logger, context }: ExtensionServices): vscode.Disposable {
  return controller.onDidTakeOver((result) => {
    if (result.attachedTo !== null) return;
    logger.info(`took over the shared bridge on ${result.url}`);
    if (result.replacedRememberedPort !== null) {
      void offerConfigRewrite(context, `Freeform Bridge: the window that ran the bridge closed and port ${result.replacedRememberedPort} is now taken by another program, so the bridge listens on port ${result.port}. The Codex config still points at the old port: rewrite it with one click.`, 'warning');
    }
  });
}

/**
 * An exchange that failed because the backend could not be reached is the user's most likely
 * problem: say it (with the URL and the reason), at most once a minute so a retrying Codex does not
 * flood the window.
 */
export function watchForBackendFailures({ controller }: ExtensionServices): vscode.Disposable {
  let lastShownAt = 0;
  const subscription = controller.onTraffic((event) => {
    if (event.type !== 'exchange-end' || event.error?.code !== 'backend_unreachable') return;
    if (Date.now() - lastShownAt < 60_000) return;
    lastShownAt = Date.now();
    void vscode.window.showErrorMessage(`Freeform Bridge: a Codex request failed because the backend is unreachable: ${event.error.message}`, 'Open Settings').then((choice) => {
      if (choice) void openSetting('backendUrl');
    });
  });
  return new vscode.Disposable(() => subscription.dispose());
}
