/**
 * What a POST stream puts on the wire and hands its reader, read from its context: the reader's
 * input, and E5's re-issue (the request under its new id, the answer under the caller's).
 */
import type { JSONRPCMessage, JSONRPCResponse } from './types.js';
import type { PostStreamContext, ReadStreamInput } from './post-stream-types.js';

export function readerInput(context: PostStreamContext): ReadStreamInput {
  if (!context.stream) throw new Error('streaming without a stream');
  return {
    stream: context.stream,
    requestIds: context.requestIds,
    lastEventId: context.lastEventId,
    seenIds: context.seenIds,
    replay: context.resumptionToken !== undefined,
    onEventId: context.onResumptionToken,
  };
}

/** E5: the message as sent: a re-issue goes under its new id. */
export function onTheWire(context: PostStreamContext): JSONRPCMessage | JSONRPCMessage[] {
  const { message, reissueAs } = context;
  return reissueAs === undefined || Array.isArray(message) ? message : { ...message, id: reissueAs };
}

/** E5: a re-issue's answer goes to the caller under the caller's own id. */
export function asCallersAnswer(context: PostStreamContext, response: JSONRPCResponse): JSONRPCResponse {
  const { message, reissueAs } = context;
  const id = Array.isArray(message) || !('id' in message) ? undefined : message.id;
  if (reissueAs === undefined || typeof id === 'undefined' || id === null || response.id !== reissueAs) return response;
  return { ...response, id };
}
