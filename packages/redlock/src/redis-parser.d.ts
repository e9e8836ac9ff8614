// The parts of redis-parser (3.x, the RESP2 parser ioredis 5 ships) that connection.ts uses.
declare module 'redis-parser' {
  interface ParserOptions {
    returnReply: (reply: unknown) => void;
    returnError: (err: Error) => void;
    returnFatalError?: (err: Error) => void;
    returnBuffers?: boolean;
    stringNumbers?: boolean;
  }
  class RedisParser {
    constructor(options: ParserOptions);
    execute(chunk: Buffer): void;
    reset(): void;
  }
  export default RedisParser;
}
