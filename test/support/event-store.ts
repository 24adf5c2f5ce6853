/**
 * An event store for the fixture server that replays each stream correctly.
 *
 * The SDK's example `InMemoryEventStore` is not fit for resumption tests:
 * - it orders events by `localeCompare` of `${streamId}_${Date.now()}_${random}`, so events
 *   stored within the same millisecond (a tool's progress notifications, its result) replay
 *   in random order;
 * - it finds an event's stream by splitting the id at `_`, which gives '' for the standalone
 *   stream (`_GET_stream`): a resumed GET stream replays nothing and is registered under ''.
 * This store numbers events in the order they are stored and keeps each event's stream in a
 * map. An unknown Last-Event-ID is an error (the server answers 500), never a silent empty stream.
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface StoredEvent {
  id: string;
  streamId: string;
  message: JSONRPCMessage;
}

export class OrderedEventStore implements EventStore {
  private nextSeq = 1;
  private readonly byId = new Map<string, { stream: StoredEvent[]; index: number }>();
  private readonly streams = new Map<string, StoredEvent[]>();

  /** Every replay this store served: the Last-Event-ID asked for and the ids sent. */
  readonly replays: { lastEventId: string; sent: string[] }[] = [];

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    let stream = this.streams.get(streamId);
    if (stream === undefined) {
      stream = [];
      this.streams.set(streamId, stream);
    }
    const id = `${String(this.nextSeq++)}-${streamId}`;
    const event: StoredEvent = { id, streamId, message };
    this.byId.set(id, { stream, index: stream.length });
    stream.push(event);
    // Stored at once (so a replay running now includes it), but the server hears back only on a
    // later turn: by then a replay in progress has registered its stream, and the server either
    // writes the event to it or knows the replay already did. Resolving sooner lets the server look
    // for the stream between the end of a replay and its registration, and lose the event.
    return new Promise((resolve) => {
      setImmediate(() => {
        resolve(id);
      });
    });
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const found = this.byId.get(lastEventId);
    if (found === undefined) throw new Error(`unknown Last-Event-ID: ${lastEventId}`);
    const { stream, index } = found;
    const record = { lastEventId, sent: [] as string[] };
    this.replays.push(record);
    // Read the stream's length on every turn: events stored while replaying are sent too.
    for (let i = index + 1; i < stream.length; i++) {
      const event = stream[i] as StoredEvent;
      record.sent.push(event.id);
      await send(event.id, event.message);
    }
    return stream[index]?.streamId ?? '';
  }
}
