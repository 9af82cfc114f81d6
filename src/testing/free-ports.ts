import net from 'node:net';

/**
 * Ports the system has free on loopback, as many as asked: all held at once, so they differ,
 * then let go for the caller to give a process it starts. Another process may take one in
 * between; a caller that starts a service retries on its "port in use" exit.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer().listen(0, '127.0.0.1', () => resolve(server));
          server.on('error', reject);
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
