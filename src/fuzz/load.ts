import { Rng } from "./rng.ts";

/**
 * Task-server load: `clients` concurrent clients each send `requests`
 * requests of a create / claim / complete mix over loopback, then the
 * final store is checked against what the clients were told:
 *  - no 5xx and no failed connection;
 *  - no double claim (a task id handed to two claims);
 *  - no lost update: every created task exists, every completed one is
 *    `done` with the summary its completer sent, every claimed-but-not-
 *    completed one is still `claimed` by its claimer, every never-claimed
 *    one is `open`, and the total cost equals the sum of completions.
 * Latency percentiles are reported per operation and overall.
 *
 * Claims are leases: completions carry the claim id, and every client also
 * tries, now and then, to complete a task another client holds (without a
 * claim id, or with a made-up one); any of those accepted is a
 * `stolen_completion`. With `leaseS` (a server started with `--lease-s`),
 * a share of claims is abandoned: after the run the harness waits out the
 * lease and checks that every abandoned claim went back to `open`, that its
 * old claim id answers `lease_expired`, and that a second claim of a task
 * only ever came after the first one expired (a heartbeat with the old id
 * is refused).
 */
export interface LoadOptions {
  /** One server, or several serving one store (client c talks to urls[c % n]). */
  url: string | string[];
  token: string;
  clients: number;
  requests: number;
  seed: number;
  /** Abort a request after this long (counted as a failure). */
  timeoutMs?: number;
  /** The server's lease (seconds) for a lease-expiry run: claims are abandoned at `abandonRate`. */
  leaseS?: number;
  abandonRate?: number;
  /** Run once, concurrently with the clients, when half of all requests were sent (a server or database restart). */
  halfway?: () => Promise<void>;
}

export interface LatencySummary {
  count: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
}

export interface LoadReport {
  clients: number;
  requests_per_client: number;
  total_requests: number;
  elapsed_s: number;
  requests_per_s: number;
  status_counts: Record<string, number>;
  server_errors: number;
  connection_errors: number;
  created: number;
  claimed: number;
  completed: number;
  empty_claims: number;
  double_claims: number;
  lost_updates: number;
  /** Completions of another client's claim the server accepted (must be 0). */
  stolen_completions: number;
  claims_granted: number;
  theft_attempts: number;
  /** Lease-expiry run: claims abandoned, and how many of them were found expired (open, old id refused). */
  abandoned: number;
  expired_ok: number;
  problems: string[];
  latency: Record<"all" | "create" | "claim" | "complete", LatencySummary>;
  ok: boolean;
}

function summarize(xs: number[]): LatencySummary {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]! : 0);
  const r = (x: number) => Math.round(x * 100) / 100;
  return { count: s.length, p50_ms: r(q(0.5)), p90_ms: r(q(0.9)), p99_ms: r(q(0.99)), max_ms: r(s[s.length - 1] ?? 0) };
}

interface TaskView {
  id: string;
  status: string;
  assigned_agent: string | null;
  result_summary: string | null;
  cost_usd: number;
}

export async function runLoad(opts: LoadOptions): Promise<LoadReport> {
  const headers = { authorization: `Bearer ${opts.token}`, "content-type": "application/json" };
  const lat: Record<"create" | "claim" | "complete", number[]> = { create: [], claim: [], complete: [] };
  const statusCounts: Record<string, number> = {};
  const problems: string[] = [];
  let serverErrors = 0;
  let connectionErrors = 0;
  let emptyClaims = 0;
  const created = new Set<string>();
  const claimedBy = new Map<string, string>();
  let doubleClaims = 0;
  const completed = new Map<string, { summary: string; cost: number }>();
  const claimIds = new Map<string, string>();
  /** claim id -> task id of every claim given up (never completed) or refused as expired. */
  const abandoned = new Map<string, string>();
  let stolen = 0;
  let granted = 0;
  let theftAttempts = 0;
  const leaseMode = opts.leaseS !== undefined;
  const note = (p: string) => {
    if (problems.length < 50) problems.push(p);
  };

  const urls = Array.isArray(opts.url) ? opts.url : [opts.url];
  let sent = 0;
  let halfway: Promise<void> | null = null;
  const callAt = async (op: "create" | "claim" | "complete", path: string, body: unknown, base: string): Promise<{ status: number; json: any } | null> => {
    const t0 = performance.now();
    if (++sent >= (opts.clients * opts.requests) / 2 && opts.halfway && !halfway) halfway = opts.halfway();
    try {
      const res = await fetch(base + path, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000) });
      const text = await res.text();
      lat[op].push(performance.now() - t0);
      statusCounts[res.status] = (statusCounts[res.status] ?? 0) + 1;
      if (res.status >= 500) {
        serverErrors++;
        note(`${op} ${path} -> ${res.status}: ${text.slice(0, 120)}`);
      }
      return { status: res.status, json: text ? JSON.parse(text) : null };
    } catch (err) {
      connectionErrors++;
      note(`${op} ${path}: ${(err as Error).message}`);
      return null;
    }
  };

  const client = async (c: number): Promise<void> => {
    const rng = new Rng(opts.seed * 1000 + c);
    const agent = `load-agent-${c}`;
    const base = urls[c % urls.length]!;
    const call = (op: "create" | "claim" | "complete", path: string, body: unknown) => callAt(op, path, body, base);
    // Each client keeps the claim ids it was given; it never uses another's.
    const held: { id: string; claim: string }[] = [];
    for (let i = 0; i < opts.requests; i++) {
      const r = rng.next();
      if (r < 0.05 && claimIds.size > 0) {
        // A token holder that does not hold the claim tries to complete it.
        const victims = [...claimIds.keys()].filter((id) => !held.some((h) => h.id === id) && !completed.has(id));
        if (victims.length === 0) continue;
        const id = victims[rng.int(victims.length)]!;
        theftAttempts++;
        const body = rng.chance(0.5) ? { result_summary: `stolen by ${agent}` } : { result_summary: `stolen by ${agent}`, claim_id: "0".repeat(32) };
        const res = await call("complete", `/tasks/${id}/complete`, body);
        if (res && res.status < 300) {
          stolen++;
          note(`task ${id} held by ${claimedBy.get(id)} was completed by ${agent} without its claim`);
        }
      } else if (held.length && r < 0.4) {
        const { id, claim } = held.splice(rng.int(held.length), 1)[0]!;
        const cost = rng.int(1000) / 1000;
        const summary = `done by ${agent} #${i}`;
        const res = await call("complete", `/tasks/${id}/complete`, { result_summary: summary, cost_usd: cost, claim_id: claim });
        if (res?.status === 200) completed.set(id, { summary, cost });
        else if (res && leaseMode && res.json?.error === "lease_expired") abandoned.set(claim, id);
        else if (res) note(`complete ${id} by ${agent} -> ${res.status}: ${JSON.stringify(res.json).slice(0, 120)}`);
      } else if (r < 0.7) {
        const res = await call("create", "/tasks", { title: `load task ${c}-${i}`, priority: rng.int(5) });
        if (res?.status === 201) created.add(res.json.id);
        else if (res) note(`create -> ${res.status}`);
      } else {
        const res = await call("claim", "/tasks/claim", { agent_id: agent, limit: 1 + rng.int(2) });
        if (res?.status !== 200) {
          if (res) note(`claim -> ${res.status}`);
          continue;
        }
        const tasks = (res.json.tasks ?? []) as TaskView[];
        if (tasks.length === 0) emptyClaims++;
        const leases = new Map<string, string>(((res.json.claims ?? []) as { task_id: string; claim_id: string }[]).map((c) => [c.task_id, c.claim_id]));
        for (const t of tasks) {
          if (claimedBy.has(t.id)) {
            // Legitimate only when the earlier claim expired: its id must be refused now.
            const old = claimIds.get(t.id)!;
            const hb = leaseMode ? await call("complete", `/tasks/${t.id}/heartbeat`, { claim_id: old }) : null;
            if (!hb || hb.json?.error !== "lease_expired") {
              doubleClaims++;
              note(`task ${t.id} claimed by ${claimedBy.get(t.id)} and again by ${agent}`);
            }
          }
          granted++;
          const lease = leases.get(t.id);
          if (!lease) note(`claim of ${t.id} returned no claim_id`);
          claimedBy.set(t.id, agent);
          claimIds.set(t.id, lease ?? "");
          if (leaseMode && rng.chance(opts.abandonRate ?? 0.3)) abandoned.set(lease ?? "", t.id);
          else held.push({ id: t.id, claim: lease ?? "" });
        }
      }
    }
  };

  const started = performance.now();
  await Promise.all(Array.from({ length: opts.clients }, (_, c) => client(c)));
  const elapsed = (performance.now() - started) / 1000;
  await halfway;
  const call = (op: "create" | "claim" | "complete", path: string, body: unknown) => callAt(op, path, body, urls[0]!);

  // Lease-expiry run: wait out the lease; every claim still held or abandoned must come back.
  let expiredOk = 0;
  if (leaseMode) {
    await Bun.sleep(opts.leaseS! * 1000 + 1500);
    for (const [claimId, id] of abandoned) {
      const hb = await call("complete", `/tasks/${id}/heartbeat`, { claim_id: claimId });
      if (hb?.json?.error === "lease_expired") expiredOk++;
      else note(`abandoned claim ${claimId} of ${id} is not expired: ${hb?.status} ${JSON.stringify(hb?.json).slice(0, 100)}`);
    }
  }

  // The final store against what the clients were told.
  let lost = 0;
  const res = await fetch(`${urls[0]}/tasks`, { headers });
  const all = (await res.json()) as TaskView[];
  const byId = new Map(all.map((t) => [t.id, t]));
  let costSum = 0;
  for (const id of created) {
    const t = byId.get(id);
    if (!t) {
      lost++;
      note(`created task ${id} is missing`);
      continue;
    }
    const done = completed.get(id);
    const claimer = claimedBy.get(id);
    if (done) {
      costSum += done.cost;
      if (t.status !== "done" || t.result_summary !== done.summary) {
        lost++;
        note(`task ${id} completed with "${done.summary}" but stored ${t.status} "${t.result_summary}"`);
      }
    } else if (claimer && leaseMode) {
      if (t.status !== "open") {
        lost++;
        note(`task ${id}: its claim by ${claimer} ran out of lease, but it is stored ${t.status}`);
      }
    } else if (claimer) {
      if (t.status !== "claimed" || t.assigned_agent !== claimer) {
        lost++;
        note(`task ${id} claimed by ${claimer} but stored ${t.status} by ${t.assigned_agent}`);
      }
    } else if (t.status !== "open") {
      lost++;
      note(`task ${id} never claimed but stored ${t.status}`);
    }
  }
  for (const id of claimedBy.keys()) if (!created.has(id)) note(`claimed task ${id} was never created by this run`);
  const storedCost = all.filter((t) => created.has(t.id)).reduce((a, t) => a + t.cost_usd, 0);
  if (Math.abs(storedCost - costSum) > 1e-6) {
    lost++;
    note(`stored cost ${storedCost} differs from the completions' ${costSum}`);
  }

  const allLat = [...lat.create, ...lat.claim, ...lat.complete];
  const total = allLat.length + connectionErrors;
  const report: LoadReport = {
    clients: opts.clients,
    requests_per_client: opts.requests,
    total_requests: total,
    elapsed_s: Math.round(elapsed * 1000) / 1000,
    requests_per_s: Math.round(total / elapsed),
    status_counts: statusCounts,
    server_errors: serverErrors,
    connection_errors: connectionErrors,
    created: created.size,
    claimed: claimedBy.size,
    completed: completed.size,
    empty_claims: emptyClaims,
    double_claims: doubleClaims,
    lost_updates: lost,
    stolen_completions: stolen,
    claims_granted: granted,
    theft_attempts: theftAttempts,
    abandoned: abandoned.size,
    expired_ok: expiredOk,
    problems,
    latency: { all: summarize(allLat), create: summarize(lat.create), claim: summarize(lat.claim), complete: summarize(lat.complete) },
    ok: false,
  };
  report.ok = serverErrors === 0 && connectionErrors === 0 && doubleClaims === 0 && lost === 0 && stolen === 0 && expiredOk === abandoned.size && problems.length === 0;
  return report;
}
