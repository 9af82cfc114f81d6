import fs from 'node:fs';

/** User and system CPU of a process so far, every thread, in ms (Linux). */
export function cpuMs(pid: number, thread?: number): number {
  const stat = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const fields = fs.readFileSync(stat, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * CPU time of every process whose command is `name` (PostgreSQL's backends, when the database
 * runs on this machine), summed from /proc. Processes that exit meanwhile take their time with
 * them, so compare runs whose connections stay open.
 */
export function cpuMsOf(name: string): number {
  let total = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) total += cpuMs(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return total;
}

export interface Profile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function, and time including callees, the top 40 of each (PROFILE_TOP). */
export function summarize(profile: Profile): string {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const name = (id: number) => {
    const frame = byId.get(id)?.callFrame;
    if (!frame) return '?';
    const file = frame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(src|dist)\//, '$1/');
    return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
  };
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const selfByName = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, time] of self) {
    selfByName.set(name(id), (selfByName.get(name(id)) ?? 0) + time);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = name(at);
      if (seen.has(n)) continue;
      seen.add(n);
      inclusive.set(n, (inclusive.get(n) ?? 0) + time);
    }
  }
  const top = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, Number(process.env.PROFILE_TOP ?? 40))
      .map(([n, t]) => `${((100 * t) / total).toFixed(1).padStart(5)} %  ${n}`)
      .join('\n');
  return `self time:\n${top(selfByName)}\n\nincluding callees:\n${top(inclusive)}`;
}

/** CPU of each thread of a process so far, in ms, summed by thread name (Linux). */
export function threadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const thread of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = fs.readFileSync(`/proc/${pid}/task/${thread}/comm`, 'utf8').trim();
      const label = Number(thread) === pid ? 'main' : name;
      byName.set(label, (byName.get(label) ?? 0) + cpuMs(pid, Number(thread)));
    } catch {
      // Ended between the listing and the read.
    }
  }
  return byName;
}
