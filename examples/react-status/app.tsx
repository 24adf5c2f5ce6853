import { useCallback, useEffect, useRef, useState } from 'react';
import { useSelector } from '@xstate/react';
import type { ActorRefFrom } from 'xstate';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Notification } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { connectionEra, type StreamableHTTPClientTransport } from '../../src/index.js';
import { fingerprint, type standaloneStreamMachine } from '../../machines/index.js';
import { statePaths, statusOf, type Status } from './chart.js';
import { Badge, DegradedReason, NextRetryLine } from './badge.js';

interface Entry {
  id: number;
  text: string;
}

/** A list that only grows, with stable keys for React; it may start from a saved list (W1: a reload). */
function useLog(initial: readonly string[] = []): [Entry[], (text: string) => void, { readonly current: string[] }] {
  const [entries, setEntries] = useState<Entry[]>(() => initial.map((text, id) => ({ id, text })));
  // Kept as each entry arrives, not as React renders: what `pagehide` saves must match the
  // transport's saved place in the stream exactly (W1), and a render may still be pending.
  const texts = useRef<string[]>([...initial]);
  const add = useCallback((text: string) => {
    texts.current.push(text);
    setEntries((previous) => [...previous, { id: previous.length, text }]);
  }, []);
  return [entries, add, texts];
}

/** The text blocks of a tool result, joined. */
function textOf(result: unknown): string {
  const content = typeof result === 'object' && result !== null && 'content' in result ? result.content : undefined;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: unknown) =>
      typeof block === 'object' && block !== null && 'text' in block && typeof block.text === 'string' ? block.text : '',
    )
    .join(' ');
}

/** One line for a server notification: its method, and for a log message its level and data. */
function describe(notification: Notification): string {
  const params = notification.params ?? {};
  if (notification.method === 'notifications/message') {
    return `${notification.method} ${String(params.level)}: ${JSON.stringify(params.data)}`;
  }
  return notification.method;
}

/** Which SDK Client the page runs: 1.x (2025-11-25), or (E1, `?era=modern`) v2 negotiating 2026-07-28. */
export type PageEra = 'streamable' | 'modern';

/** What the page asks of either SDK Client. */
interface PageClient {
  connect(transport: StreamableHTTPClientTransport): Promise<void>;
  close(): Promise<void>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    onprogress: (progress: { progress: number; total?: number | undefined }) => void,
  ): Promise<unknown>;
  /**
   * E7: a `subscriptions/listen` stream for tools/list_changed (2026-07-28 only); resolves once it
   * is acknowledged, with how it will end (`remote`: it dropped, as in an outage).
   */
  listen?: () => Promise<{ ended: Promise<'local' | 'graceful' | 'remote'> }>;
}

function pageClient(era: PageEra, onNotification: (notification: Notification) => void): PageClient {
  const info = { name: 'react-status', version: '0.1.0' };
  const forward = (notification: Notification) => {
    onNotification(notification);
    return Promise.resolve();
  };
  if (era === 'modern') {
    const client = new ClientV2(info, { versionNegotiation: { mode: 'auto' } });
    client.fallbackNotificationHandler = forward;
    return {
      connect: (transport) => client.connect(transport),
      close: () => client.close(),
      callTool: (name, args, onprogress) => client.callTool({ name, arguments: args }, { onprogress }),
      listen: async () => ({ ended: (await client.listen({ toolsListChanged: true })).closed }),
    };
  }
  const client = new Client(info);
  client.fallbackNotificationHandler = forward;
  return {
    connect: (transport) => client.connect(transport),
    close: () => client.close(),
    callTool: (name, args, onprogress) => client.callTool({ name, arguments: args }, undefined, { onprogress }),
  };
}

/**
 * The SDK Client over the transport. Start makes a new Client each time (the old one's handlers
 * are dropped from the transport first); the transport itself allows start() after close() (F2).
 * In the 2026-07-28 era it then listens for tools/list_changed (E7).
 */
function useMcpClient(transport: StreamableHTTPClientTransport, savedNotifications: readonly string[], era: PageEra) {
  const client = useRef<PageClient | undefined>(undefined);
  const [notifications, notify, notificationTexts] = useLog(savedNotifications);
  const [warnings, warn] = useLog();
  const [result, setResult] = useState('');
  const [listening, setListening] = useState('—');

  /** E7: opens the listen stream (2026-07-28), and says when it ends; the App opens it again once connected. */
  const listen = useCallback(async () => {
    const current = client.current;
    if (current?.listen === undefined) return;
    setListening('opening');
    try {
      const { ended } = await current.listen();
      setListening('open: tools/list_changed');
      void ended.then((how) => {
        if (client.current === current) setListening(`ended (${how})`);
      });
    } catch (error) {
      setListening(`refused: ${String(error)}`);
    }
  }, []);

  const start = useCallback(async () => {
    transport.onclose = undefined;
    transport.onmessage = undefined;
    transport.onerror = (error) => {
      warn(error.message);
    };
    const next = pageClient(era, (notification) => {
      notify(describe(notification));
    });
    client.current = next;
    try {
      await next.connect(transport);
    } catch (error) {
      warn(`connect: ${String(error)}`);
      return;
    }
    await listen();
  }, [transport, notify, warn, era, listen]);

  const close = useCallback(async () => {
    await (client.current ?? transport).close();
  }, [transport]);

  const call = useCallback(
    async (name: string, args: Record<string, unknown>) => {
      if (!client.current) return;
      try {
        const answer = await client.current.callTool(name, args, ({ progress, total }) => {
          notify(`notifications/progress ${progress}/${total ?? '?'}`);
        });
        setResult(`${name} → ${textOf(answer)}`);
      } catch (error) {
        setResult(`${name} failed: ${String(error)}`);
      }
    },
    [notify],
  );

  return { start, close, call, listen, notifications, notificationTexts, warnings, result, listening };
}

/** Every change of the badge's word, recorded from the actor itself so that none is batched away. */
function useStatusHistory(transport: StreamableHTTPClientTransport): Status[] {
  const [history, setHistory] = useState<Status[]>([]);
  useEffect(() => {
    const record = (status: Status) => {
      setHistory((previous) => (previous.at(-1) === status ? previous : [...previous, status]));
    };
    record(statusOf(transport.actor.getSnapshot()));
    const subscription = transport.actor.subscribe((snapshot) => {
      record(statusOf(snapshot));
    });
    return () => {
      subscription.unsubscribe();
    };
  }, [transport]);
  return history;
}

type StandaloneActor = ActorRefFrom<typeof standaloneStreamMachine>;

/** The standalone stream child (invoked as 'standalone' inside `open`): its own state path. */
function StandaloneState({ actor }: { actor: StandaloneActor }) {
  const paths = useSelector(actor, (snapshot) => statePaths(snapshot.value).join(', '));
  return <>{paths}</>;
}

function List({ label, entries, empty, className }: { label: string; entries: Entry[]; empty: string; className?: string }) {
  if (entries.length === 0) return <p className="empty">{empty}</p>;
  return (
    <ul aria-label={label} className={className}>
      {entries.map((entry) => (
        <li key={entry.id}>{entry.text}</li>
      ))}
    </ul>
  );
}

/** W1: what the page keeps across a reload, beside the transport's own saved state. */
export interface PageMemory {
  /** The session was restored from a saved state (no initialize was sent). */
  restored: boolean;
  /** The notification list as it was when the page was left. */
  notifications: readonly string[];
  /** Called with the list when the page is left, to keep it. */
  keep: (notifications: readonly string[]) => void;
}

/** W1: the list is handed over when the page hides (a reload, a navigation), with the transport's state. */
function useKeepOnHide(texts: { readonly current: string[] }, keep: (texts: readonly string[]) => void): void {
  useEffect(() => {
    const onHide = () => {
      keep(texts.current);
    };
    window.addEventListener('pagehide', onHide);
    return () => {
      window.removeEventListener('pagehide', onHide);
    };
  }, [texts, keep]);
}

const noMemory: PageMemory = { restored: false, notifications: [], keep: () => undefined };

export function App({
  transport,
  server,
  memory = noMemory,
  era = 'streamable',
}: {
  transport: StreamableHTTPClientTransport;
  server: string;
  memory?: PageMemory;
  /** Which SDK Client to run (`?era=modern`: v2, negotiating 2026-07-28). */
  era?: PageEra;
}) {
  const status = useSelector(transport.actor, statusOf);
  const paths = useSelector(transport.actor, (snapshot) => statePaths(snapshot.value).join(', '));
  // X1: the page shows the session's fingerprint, never the session ID.
  const session = useSelector(transport.actor, (snapshot) => fingerprint(snapshot.context.sessionId));
  const protocol = useSelector(transport.actor, (snapshot) => snapshot.context.protocolVersion);
  const spoken = useSelector(transport.actor, connectionEra);
  const standalone = useSelector(transport.actor, (snapshot) => snapshot.children.standalone) as StandaloneActor | undefined;
  const history = useStatusHistory(transport);
  const { start, close, call, listen, notifications, notificationTexts, warnings, result, listening } = useMcpClient(
    transport,
    memory.notifications,
    era,
  );
  useKeepOnHide(notificationTexts, memory.keep);
  const [text, setText] = useState('hello from the browser');

  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    void start();
  }, [start]);

  // E7, W6: a listen stream that dropped (an outage) is opened again once the server answers again.
  useEffect(() => {
    if (status === 'connected' && listening === 'ended (remote)') void listen();
  }, [status, listening, listen]);

  const live = status === 'connected' || status === 'degraded' || status === 'reconnecting' || status === 'offline';
  const stopped = status === 'idle' || status === 'closed' || status === 'failed';

  return (
    <main>
      <header>
        <h1>MCP transport status</h1>
        <Badge transport={transport} />
        <DegradedReason transport={transport} />
      </header>
      <dl>
        <dt>Server</dt>
        <dd>{server}</dd>
        <dt>Chart state</dt>
        <dd data-testid="chart-state">{paths}</dd>
        <dt>Standalone stream</dt>
        <dd data-testid="standalone-state">{standalone ? <StandaloneState actor={standalone} /> : '—'}</dd>
        <dt>Session</dt>
        {/* After close() the chart still holds the ended session's ID until start(); say so. */}
        <dd data-testid="session">{session ?? '—'}</dd>
        <dt>Protocol</dt>
        <dd data-testid="protocol">{protocol ?? '—'}</dd>
        <dt>Era</dt>
        <dd data-testid="era">{spoken ?? '—'}</dd>
        <dt>Listen stream</dt>
        <dd data-testid="listen">{listening}</dd>
        <dt>Restored</dt>
        <dd data-testid="restored">{memory.restored ? 'yes: the session continued after a reload' : 'no'}</dd>
        <dt>Next retry</dt>
        <NextRetryLine transport={transport} />
      </dl>
      <div className="actions">
        <input
          aria-label="Echo text"
          value={text}
          onChange={(event) => {
            setText(event.target.value);
          }}
        />
        <button disabled={!live} onClick={() => void call('echo', { text })}>
          Call echo
        </button>
        <button disabled={!live} onClick={() => void call('progress', { steps: 3, delayMs: 100 })}>
          Call progress
        </button>
        <button disabled={stopped} onClick={() => void close()}>
          Close
        </button>
        <button disabled={!stopped} onClick={() => void start()}>
          Start
        </button>
      </div>
      <output aria-label="Result">{result}</output>
      <h2>Notifications</h2>
      <List label="Notifications" entries={notifications} empty="none yet" />
      <h2>Status history</h2>
      <p data-testid="history">{history.join(' → ')}</p>
      <h2>Warnings</h2>
      <List label="Warnings" entries={warnings} empty="none" className="warnings" />
    </main>
  );
}
