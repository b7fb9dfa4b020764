// A lean HTTP/1.1 client over keep-alive TLS sockets, for the webhook load generator. The
// generator shares two cores with the server under test: node:https's ClientRequest costs
// ~600 µs of CPU per request at 1,000/s here, enough to starve the server it measures. This
// writes each request as one buffer and reads a response by Content-Length (or chunked),
// nothing else: one request at a time per connection, `maxSockets` connections, the rest
// queued in order.
import { connect } from 'node:tls';

const CRLF2 = Buffer.from('\r\n\r\n');
const LAST_CHUNK = Buffer.from('0\r\n\r\n');

export class LeanHttpsClient {
  constructor({ host, port, ca, maxSockets = 32, localAddress }) {
    this.options = { host, port, ca, servername: undefined, ALPNProtocols: ['http/1.1'], localAddress };
    this.maxSockets = maxSockets;
    this.idle = [];
    this.open = 0;
    this.queue = [];
    this.closed = false;
  }

  /** POSTs `body` (a string) to `path`; resolves { status, body: Buffer } or rejects on a broken connection. */
  post(path, body, contentType = 'application/json') {
    const payload = Buffer.from(body);
    const head = Buffer.from(
      `POST ${path} HTTP/1.1\r\nHost: ${this.options.host}:${this.options.port}\r\n` +
        `Content-Type: ${contentType}\r\nContent-Length: ${payload.length}\r\nAccept: application/json\r\n\r\n`,
    );
    return new Promise((resolve, reject) => {
      this.queue.push({ data: Buffer.concat([head, payload]), resolve, reject });
      this.pump();
    });
  }

  close() {
    this.closed = true;
    for (const connection of this.idle) connection.socket.destroy();
    this.idle = [];
  }

  pump() {
    while (this.queue.length) {
      let connection = this.idle.pop();
      if (!connection) {
        if (this.open >= this.maxSockets) return;
        connection = this.connect();
      }
      connection.send(this.queue.shift());
    }
  }

  connect() {
    this.open++;
    const socket = connect(this.options);
    socket.setNoDelay(true);
    const connection = new Connection(socket, (c) => {
      if (this.closed) return socket.destroy();
      this.idle.push(c);
      this.pump();
    });
    socket.on('close', () => {
      this.open--;
      const i = this.idle.indexOf(connection);
      if (i >= 0) this.idle.splice(i, 1);
      connection.fail(new Error('the connection closed'));
      if (!this.closed) this.pump();
    });
    socket.on('error', () => {}); // 'close' follows
    return connection;
  }
}

class Connection {
  constructor(socket, onFree) {
    this.socket = socket;
    this.onFree = onFree;
    this.current = undefined;
    this.reset();
    socket.on('data', (chunk) => this.onData(chunk));
  }

  reset() {
    this.chunks = [];
    this.length = 0;
    /** Once the head is read: its end, the status, and the whole message's length (Content-Length). */
    this.head = undefined;
  }

  send(request) {
    this.current = request;
    this.reset();
    this.socket.write(request.data);
  }

  fail(error) {
    const current = this.current;
    this.current = undefined;
    current?.reject(error);
  }

  onData(chunk) {
    if (!this.current) return;
    // Chunks are kept as they come and joined once: a response of megabytes arrives in
    // hundreds of reads.
    this.chunks.push(chunk);
    this.length += chunk.length;
    if (!this.head) {
      const buffer = this.chunks.length === 1 ? chunk : Buffer.concat(this.chunks);
      this.chunks = [buffer];
      const end = buffer.indexOf(CRLF2);
      if (end < 0) return;
      const text = buffer.toString('latin1', 0, end);
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text);
      const chunked = /\r\ntransfer-encoding:\s*chunked/i.test(text);
      if (!length && !chunked) return this.fail(new Error(`a response without a length: ${text.split('\r\n')[0]}`));
      this.head = {
        bodyStart: end + 4,
        status: Number(text.slice(9, 12)),
        total: length ? end + 4 + Number(length[1]) : undefined,
        close: /\r\nconnection:\s*close/i.test(text),
      };
    }
    const { bodyStart, status, total, close } = this.head;
    let body;
    if (total !== undefined) {
      if (this.length < total) return;
      body = Buffer.concat(this.chunks).subarray(bodyStart, total);
    } else {
      // Chunked: only a message ending in the last chunk ("0\r\n\r\n") can be complete.
      const tail = chunk.length >= 5 ? chunk : Buffer.concat(this.chunks.slice(-2));
      if (!tail.subarray(-5).equals(LAST_CHUNK)) return;
      const buffer = Buffer.concat(this.chunks);
      this.chunks = [buffer];
      body = dechunk(buffer, bodyStart);
      if (!body) return;
    }
    const current = this.current;
    this.current = undefined;
    this.reset();
    current.resolve({ status, body });
    if (close) this.socket.end();
    else this.onFree(this);
  }
}

/** The body of a complete chunked message starting at `offset`, or undefined while incomplete. */
function dechunk(buffer, offset) {
  const parts = [];
  for (let at = offset; ;) {
    const lineEnd = buffer.indexOf('\r\n', at, 'latin1');
    if (lineEnd < 0) return undefined;
    const size = parseInt(buffer.toString('latin1', at, lineEnd), 16);
    if (size === 0) return buffer.indexOf('\r\n', lineEnd + 2, 'latin1') >= 0 ? Buffer.concat(parts) : undefined;
    if (buffer.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
