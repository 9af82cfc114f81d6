import net from 'node:net';

/** Every port this process has handed out: two callers at once must not get the same one. */
const handedOut = new Set<number>();

/**
 * Ports the system has free on loopback, as many as asked: all held at once, so they differ,
 * then let go for the caller to give a process it starts. A port is never handed out twice in
 * one process (two nodes started together would otherwise race for one the system gave both in
 * turn). Another process may still take one in between; a caller that starts a service retries
 * on its "already in use" exit.
 */
export async function freePorts(count: number): Promise<number[]> {
  const held: net.Server[] = [];
  const ports: number[] = [];
  try {
    while (ports.length < count) {
      const server = await new Promise<net.Server>((resolve, reject) => {
        const listening = net.createServer().listen(0, '127.0.0.1', () => resolve(listening));
        listening.on('error', reject);
      });
      held.push(server);
      const { port } = server.address() as net.AddressInfo;
      if (handedOut.has(port)) continue;
      handedOut.add(port);
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}
