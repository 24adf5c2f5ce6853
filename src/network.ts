import type { NetworkEvent } from '../machines/types.js';

/**
 * W2: where the transport learns that the network is gone and back. In a browser it is
 * `navigator.onLine` with the `offline` and `online` events; Node has no sound signal (a host
 * may pass its own, e.g. from a connectivity check it trusts).
 */
export interface NetworkSignal {
  /** Whether the network is up now. */
  readonly online: boolean;
  /** Calls `listener` on each change; returns the unsubscribe. */
  subscribe(listener: (online: boolean) => void): () => void;
}

interface BrowserGlobals {
  navigator?: { onLine?: unknown };
  addEventListener?: (type: string, listener: () => void) => void;
  removeEventListener?: (type: string, listener: () => void) => void;
}

/** The browser's signal (`navigator.onLine`, `offline`/`online` on the global); undefined outside a browser. */
export function browserNetwork(): NetworkSignal | undefined {
  const host = globalThis as BrowserGlobals;
  const { navigator, addEventListener, removeEventListener } = host;
  if (typeof navigator?.onLine !== 'boolean' || typeof addEventListener !== 'function' || typeof removeEventListener !== 'function') {
    return undefined;
  }
  return {
    get online() {
      return navigator.onLine !== false;
    },
    subscribe(listener) {
      const offline = () => {
        listener(false);
      };
      const online = () => {
        listener(true);
      };
      addEventListener.call(host, 'offline', offline);
      addEventListener.call(host, 'online', online);
      return () => {
        removeEventListener.call(host, 'offline', offline);
        removeEventListener.call(host, 'online', online);
      };
    },
  };
}

/** A signal driven by hand: for tests (the testing entry) and for hosts with their own connectivity check. */
export function manualNetwork(online = true): NetworkSignal & { setOnline(online: boolean): void } {
  const listeners = new Set<(online: boolean) => void>();
  let current = online;
  return {
    get online() {
      return current;
    },
    setOnline(next) {
      if (next === current) return;
      current = next;
      for (const listener of [...listeners]) listener(next);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

/** The chart's `networkStatus` actor over a signal: tells the state now, then each change. */
export function networkEvents(signal: NetworkSignal | undefined, sendBack: (event: NetworkEvent) => void): (() => void) | undefined {
  if (signal === undefined) return undefined;
  if (!signal.online) sendBack({ type: 'network.offline' });
  return signal.subscribe((online) => {
    sendBack({ type: online ? 'network.online' : 'network.offline' });
  });
}
