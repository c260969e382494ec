/** The realtime stream: credential, hub and SSE endpoint (docs/realtime.md). */
export { RealtimeCredentials, loadRealtimeSecret, type RealtimeGrant, type VerifyResult } from './credential.ts';
export { Hub, frameOf, frameTail, frameText, streamOwner, type Frame, type HubOptions, type HubStream, type StreamCap, type StreamStats } from './hub.ts';
export { streamHandler, type StreamDeps, type StreamOptions } from './stream.ts';
export { channelTag, encodePositions, parseEventId } from './event-id.ts';

/** Where the stream is served, relative to the API prefix (and to the public base URL). */
export const STREAM_PATH = '/realtime/stream';
