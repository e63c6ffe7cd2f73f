import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type * as vscode from 'vscode';
import type { BridgeStatus } from './bridge-controller.ts';
import type { ExtensionServices } from './extension-services.ts';
import type { TrafficPanel } from './traffic-panel.ts';
import type { IgnoredWorkspaceSettings, WorkspaceSettingGuard } from './workspace-setting-guard.ts';

/**
 * Returned by activate() only when VS Code runs the extension's tests (ExtensionMode.Test): the
 * real-VS-Code suites read the state through it instead of scraping the workbench.
 */
export interface FreeformBridgeTestApi {
  getState(): {
    status: BridgeStatus['kind'];
    url: string | null;
    port: number | null;
    backendUrl: string | null;
    errorMessage: string | null;
    /** Why the latest start or restart failed (also while a kept previous server runs). */
    lastStartFailure: { reason: string; message: string; port: number } | null;
    roundTrips: number;
    warnings: number;
    statusBarText: string;
    statusBarTooltip: string;
    trafficLines: readonly string[];
    /** The panel's store: round trips kept and the bytes of their bodies (whether or not the panel is open). */
    trafficPanel: { open: boolean; readyCount: number; exchanges: number; retainedBodyBytes: number };
    /** The thread the bridge serves on when this window runs it (a worker's id, never 0: the extension host's own). */
    bridgeThreadId: number | null;
    /** User-only settings the workspace tried to set, and the notices shown about them. */
    ignoredWorkspaceSettings: readonly IgnoredWorkspaceSettings[];
    workspaceSettingNotices: readonly string[];
    /** The origin the stored backend API key is bound to (null: no key). */
    backendApiKeyOrigin: string | null;
  };
  getBridgeToken(): string;
  /** Starts (or restarts) measuring this thread's event-loop delay: the extension host's main thread. */
  startEventLoopDelay(): void;
  /** The delay since startEventLoopDelay(), which stops measuring. */
  takeEventLoopDelay(): EventLoopDelayFigures;
}

export interface EventLoopDelayFigures {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  samples: number;
}

/**
 * A 1 ms resolution, so a stall of a few milliseconds shows (each sample includes the timer's own
 * interval: an idle loop reads about 1 ms). Created on first use, so nothing samples unless a test asks.
 */
function createEventLoopDelayMeter(): Pick<FreeformBridgeTestApi, 'startEventLoopDelay' | 'takeEventLoopDelay'> {
  let histogram: IntervalHistogram | null = null;
  const milliseconds = (nanoseconds: number): number => nanoseconds / 1e6;
  return {
    startEventLoopDelay: () => {
      histogram?.disable();
      histogram = monitorEventLoopDelay({ resolution: 1 });
      histogram.enable();
    },
    takeEventLoopDelay: () => {
      if (!histogram) throw new Error('takeEventLoopDelay() needs startEventLoopDelay() first');
      histogram.disable();
      const figures = { p50Ms: milliseconds(histogram.percentile(50)), p99Ms: milliseconds(histogram.percentile(99)), maxMs: milliseconds(histogram.max), samples: histogram.count };
      histogram = null;
      return figures;
    },
  };
}

export function createTestApi(
  { controller, secrets }: ExtensionServices,
  views: { statusBarItem: vscode.StatusBarItem; trafficPanel: TrafficPanel; workspaceSettingGuard: WorkspaceSettingGuard },
): FreeformBridgeTestApi {
  const { statusBarItem, trafficPanel, workspaceSettingGuard } = views;
  return {
    getState: () => {
      const status = controller.getStatus();
      const tooltip = statusBarItem.tooltip;
      return {
        status: status.kind,
        url: status.kind === 'on' ? status.url : null,
        port: status.kind === 'on' ? status.port : null,
        backendUrl: status.kind === 'on' ? status.backendUrl : null,
        errorMessage: status.kind === 'error' ? status.message : null,
        lastStartFailure: controller.getLastStartFailure(),
        ...controller.getCounts(),
        statusBarText: statusBarItem.text,
        // Markdown source with appendText's escapes undone, so tests can look for plain phrases.
        statusBarTooltip: (typeof tooltip === 'string' ? tooltip : (tooltip?.value ?? '')).replace(/&nbsp;/g, ' '),
        trafficLines: [...controller.getTrafficLines()],
        trafficPanel: trafficPanel.getViewState(),
        bridgeThreadId: controller.getBridgeThreadId(),
        ignoredWorkspaceSettings: workspaceSettingGuard.getIgnored(),
        workspaceSettingNotices: workspaceSettingGuard.getShownNotices(),
        backendApiKeyOrigin: secrets.getBackendApiKeyOrigin(),
      };
    },
    getBridgeToken: () => secrets.getBridgeToken(),
    ...createEventLoopDelayMeter(),
  };
}
