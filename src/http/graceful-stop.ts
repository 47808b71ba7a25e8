// How the HTTP server stops: every request it carries out is answered, and keep-alive clients
// learn of the stop from an answer that closes their connection rather than from a request sent
// and lost. Node closes only the connections idle when the server closes, so a client sending one
// request after another would go on being served until the grace deadline; and Node counts a
// connection idle once its answer is ended, though a client reading slowly may not have it yet.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/** A stopping server closes connections still idle after this (their clients sent nothing more), then looks again this often. */
const idleSweepAfterMs = 250;
const idleSweepMs = 100;

export interface ClosingConnections {
  /** The server's request listener. */
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** The server's connection listener. */
  track(socket: Socket): void;
  /** The service stops: the answers not yet begun and those to come close their connections. */
  close(): void;
  /** Whether an answer is still being handed to a client that reads it slowly. */
  writing(): boolean;
}

/**
 * The HTTP handler, and how it answers once the service stops: each connection's answer not yet
 * begun (its request in flight) or, on an idle connection, the answer to its next request carries
 * `Connection: close`, after which Node closes the connection; a request pipelined behind that
 * one would have no answer, so it is not carried out at all (a client sees the connection close
 * with it unanswered, as after any request it never sent). Costs one WeakMap entry a request.
 */
export function closingConnections(handler: (request: IncomingMessage, response: ServerResponse) => void): ClosingConnections {
  let closing: WeakSet<Socket> | undefined;
  const open = new Set<Socket>();
  /** Each connection's latest answer (Node answers a connection's pipelined requests in order). */
  const latest = new WeakMap<Socket, ServerResponse>();
  const closeWith = (socket: Socket, response: ServerResponse) => {
    closing!.add(socket);
    response.setHeader('Connection', 'close');
  };
  return {
    handle(request, response) {
      const socket = request.socket;
      if (closing === undefined) {
        latest.set(socket, response);
        return handler(request, response);
      }
      if (closing.has(socket)) {
        response.statusCode = 503;
        response.end();
        return;
      }
      closeWith(socket, response);
      handler(request, response);
    },
    track(socket) {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    },
    close() {
      if (closing) return;
      closing = new WeakSet();
      for (const socket of open) {
        const response = latest.get(socket);
        if (response !== undefined && !response.headersSent) closeWith(socket, response);
      }
    },
    writing() {
      for (const socket of open) if (socket.writableLength > 0) return true;
      return false;
    },
  };
}

/**
 * Stops accepting connections and waits for in-flight requests, cutting them off after `graceMs`.
 * Answers in flight and to come close their connections (closingConnections); connections still
 * idle a quarter of a second later (their client sent nothing since) are closed, unless an answer
 * is still being written to a slow reader, which Node would count idle and cut.
 */
export function stopServer(server: Server, connections: ClosingConnections, graceMs: number): Promise<void> {
  return new Promise((resolvePromise) => {
    connections.close();
    const sweep = () => {
      if (!connections.writing()) server.closeIdleConnections();
    };
    let sweeping: NodeJS.Timeout | undefined;
    const firstSweep = setTimeout(() => {
      sweep();
      sweeping = setInterval(sweep, idleSweepMs);
    }, idleSweepAfterMs);
    const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
    deadline.unref();
    // net.Server's close, not http.Server's: that one also closes the connections idle right now,
    // and a request a client is sending on one of them this moment would be lost unanswered.
    NetServer.prototype.close.call(server, () => {
      // With nothing listening or connected, http.Server's close only stops its timeout checks.
      server.close();
      clearTimeout(deadline);
      clearTimeout(firstSweep);
      clearInterval(sweeping);
      resolvePromise();
    });
  });
}
