import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy to PostgreSQL that can cut its connections, hold new ones back until released,
 * swallow a LISTEN as a server that stopped answering would, and freeze listening connections as
 * a NAT or load balancer that drops a connection without a reset does.
 */
export async function holdingProxy(target: URL) {
  const open = new Set<Socket>();
  let holding = false;
  let held: (() => void)[] = [];
  let swallowing = false;
  let swallowed = 0;
  /** Connections that sent a LISTEN, and those of them that no longer pass anything on. */
  const listening = new Set<Socket>();
  const frozen = new Set<Socket>();
  const server = createServer((inbound) => {
    open.add(inbound);
    inbound.on('close', () => {
      open.delete(inbound);
      listening.delete(inbound);
      frozen.delete(inbound);
    });
    inbound.on('error', () => inbound.destroy());
    const forward = () => {
      if (inbound.destroyed) return;
      const outbound = connect(Number(target.port || 5432), target.hostname);
      outbound.on('error', () => inbound.destroy());
      outbound.on('close', () => inbound.destroy());
      inbound.on('close', () => outbound.destroy());
      inbound.on('data', (chunk: Buffer) => {
        if (chunk.includes('listen "')) listening.add(inbound);
        if (frozen.has(inbound)) return;
        if (swallowing && chunk.includes('listen "')) swallowed++;
        else outbound.write(chunk);
      });
      outbound.on('data', (chunk: Buffer) => {
        if (!frozen.has(inbound)) inbound.write(chunk);
      });
    };
    if (holding) held.push(forward);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target.href);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.href,
    open: () => open.size,
    held: () => held.length,
    /** From now on a LISTEN sent through the proxy never reaches the server (nor is answered). */
    swallowListen() {
      swallowing = true;
    },
    swallowed: () => swallowed,
    /**
     * The listening connections open now stop passing anything on, either way, and stay open:
     * a connection dropped by a NAT or a load balancer without a word.
     */
    freezeListeners() {
      for (const socket of listening) frozen.add(socket);
      return frozen.size;
    },
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const forward of held) forward();
      held = [];
    },
    cutAll() {
      for (const socket of open) socket.destroy();
    },
    close() {
      for (const socket of open) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
