import { useEffect, useState } from 'react';
import { useSelector } from '@xstate/react';
import { connectionStatus, degradedReason, nextRetry, type NextRetry, type StreamableHTTPClientTransport } from '../../src/index.js';

/** U3, W2: the connection's one word, from the chart's tags (`offline` wins over `connected`). */
export function Badge({ transport }: { transport: StreamableHTTPClientTransport }) {
  const status = useSelector(transport.actor, connectionStatus);
  return (
    <span className="badge" role="status" aria-label="Connection" data-status={status}>
      {status}
    </span>
  );
}

/** W6: why the badge says `degraded` (the latest failure), or nothing. */
export function DegradedReason({ transport }: { transport: StreamableHTTPClientTransport }) {
  const reason = useSelector(transport.actor, degradedReason);
  return reason === undefined ? null : <small data-testid="degraded-reason">{reason}</small>;
}

/** W3: the soonest reconnect, read on a timer (the waits run in child actors; a countdown ticks anyway). */
export function useNextRetry(transport: StreamableHTTPClientTransport, everyMs = 200): NextRetry | undefined {
  const [retry, setRetry] = useState(() => nextRetry(transport.actor.getSnapshot()));
  useEffect(() => {
    const timer = setInterval(() => {
      setRetry(nextRetry(transport.actor.getSnapshot()));
    }, everyMs);
    return () => {
      clearInterval(timer);
    };
  }, [transport, everyMs]);
  return retry;
}

/** W3: "standalone stream: reconnecting in 2.4 s (attempt 2)". */
export function describeRetry(retry: NextRetry | undefined): string {
  if (retry === undefined) return '—';
  const what = retry.stream === 'standalone' ? 'standalone stream' : 'request stream';
  return `${what}: reconnecting in ${(retry.inMs / 1000).toFixed(1)} s (attempt ${retry.attempt})`;
}

export function NextRetryLine({ transport }: { transport: StreamableHTTPClientTransport }) {
  const retry = useNextRetry(transport);
  return <dd data-testid="next-retry">{describeRetry(retry)}</dd>;
}
