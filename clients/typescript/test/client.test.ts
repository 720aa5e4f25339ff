// The client against a live `wolfie api` that this test starts (node's own test runner).
// WOLFIE_BIN names the `wolfie` command (default: the repository's .venv/bin/wolfie).

import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { WolfieApiError, WolfieClient } from "../src/index.js";

const here = dirname(fileURLToPath(import.meta.url)); // clients/typescript/dist/test
const repo = resolve(here, "..", "..", "..", "..");
const wolfieBin = process.env.WOLFIE_BIN ?? join(repo, ".venv", "bin", "wolfie");
const token = "ts-client-token";

let server: ChildProcess;
let baseUrl: string;
let root: string;

function startApi(): Promise<string> {
  root = mkdtempSync(join(tmpdir(), "wolfie-ts-"));
  const env = { ...process.env, WOLFIE_API_TOKEN: token, HF_HUB_OFFLINE: "1", DO_NOT_TRACK: "1" };
  server = spawn(wolfieBin, ["api", "--pack", "desk", "--root", root, "--port", "0"], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  return new Promise((found, failed) => {
    let seen = "";
    const timer = setTimeout(() => failed(new Error(`wolfie api did not start: ${seen}`)), 120_000);
    server.stderr!.setEncoding("utf8");
    server.stderr!.on("data", (chunk: string) => {
      seen += chunk;
      const match = / at (http:\/\/\S+) /.exec(seen);
      if (match?.[1]) {
        clearTimeout(timer);
        found(match[1]);
      }
    });
    server.on("error", (error) => failed(new Error(`could not start ${wolfieBin}: ${error.message}`)));
    server.on("exit", (code) => failed(new Error(`wolfie api exited ${code}: ${seen}`)));
  });
}

before(async () => {
  baseUrl = await startApi();
});

after(() => {
  server.kill("SIGTERM");
  rmSync(root, { recursive: true, force: true });
});

test("remember, recall, feedback: the track record rises", async () => {
  const wolfie = new WolfieClient({ baseUrl, token, pack: "desk" });
  const made = await wolfie.remember({
    intent: "Chased a breakout I missed",
    response: "Bought the high, stopped out -1R",
    polarity: "failure",
    metadata: { symbol: "NVDA" },
  });
  assert.equal(made.status, "created");
  const first = await wolfie.recall({ query: "missed the breakout, chase it?" });
  assert.ok(first.episode_id);
  assert.deepEqual(first.items.map((item) => item.id), [made.id]);
  assert.equal(first.items[0]?.track_record, 0);
  const rated = await wolfie.feedback(first.episode_id, { rating: 1 });
  assert.equal(rated.applied, 1);
  const again = await wolfie.search({ query: "missed the breakout, chase it?" });
  assert.equal(again.episode_id, null);
  assert.ok((again.items[0]?.track_record ?? 0) > 0);
  assert.equal(again.items[0]?.track_record, rated.track_records[made.id!]);
});

test("signal, revise, history, get, forget", async () => {
  const wolfie = new WolfieClient({ baseUrl, token, pack: "desk" });
  const remembered = await wolfie.remember({ intent: "Where is the stop?", response: "Two ATR below" });
  const made = { ...remembered, id: remembered.id! }; // null only when admission control refuses
  const recall = await wolfie.recall({ query: "where do I put the stop", k: 1 });
  const signalled = await wolfie.signal(recall.episode_id!, { name: "acted_on" });
  assert.equal(signalled.source, "implicit");
  const revised = await wolfie.revise(made.id, { response: "Below the last swing low" });
  assert.equal(revised.status, "revised");
  const history = await wolfie.history(made.id);
  assert.deepEqual(history.versions.map((v) => v.event), ["remember", "revise"]);
  assert.equal((await wolfie.get(made.id)).response, "Below the last swing low");
  const forgot = await wolfie.forget({ memory_ids: [made.id], purge: true });
  assert.deepEqual(forgot.memory_ids, [made.id]);
  await assert.rejects(wolfie.get(made.id), (error: unknown) => {
    assert.ok(error instanceof WolfieApiError);
    assert.equal(error.status, 404);
    assert.equal(error.type, "UnknownMemory");
    return true;
  });
});

test("errors carry the server's status, type and one-line message", async () => {
  const wolfie = new WolfieClient({ baseUrl, token, pack: "desk" });
  await assert.rejects(wolfie.recall({ query: "x", k: 500 }), (error: unknown) => {
    assert.ok(error instanceof WolfieApiError);
    assert.equal(error.status, 422);
    assert.match(error.message, /k: Input should be less than or equal to 100/);
    return true;
  });
  const stranger = new WolfieClient({ baseUrl, pack: "desk" });
  await assert.rejects(stranger.maturity(), (error: unknown) => {
    assert.ok(error instanceof WolfieApiError);
    assert.equal(error.status, 401);
    return true;
  });
  const elsewhere = new WolfieClient({ baseUrl, token, pack: "other" });
  await assert.rejects(elsewhere.maturity(), { status: 404, type: "PackNotServed" });
});

/** A local HTTP server answering every request with `answer`; resolves to its URL. */
function fake(answer: (path: string) => { status: number; type?: string; body: string; location?: string }): Promise<[string, Server]> {
  const web = createServer((request, response) => {
    const { status, type, body, location } = answer(request.url ?? "/");
    response.writeHead(status, { "content-type": type ?? "application/json", ...(location ? { location } : {}) });
    response.end(body);
  });
  return new Promise((ready) =>
    web.listen(0, "127.0.0.1", () => ready([`http://127.0.0.1:${(web.address() as AddressInfo).port}`, web])),
  );
}

test("a reply that is not Wolfie's JSON is a WolfieApiError, ok or not", async () => {
  const [url, web] = await fake((path) =>
    path.endsWith("/maturity")
      ? { status: 502, type: "text/html", body: "<html>Bad gateway</html>" }
      : { status: 200, type: "text/plain", body: "not json" },
  );
  try {
    const wolfie = new WolfieClient({ baseUrl: url, token, pack: "desk" });
    await assert.rejects(wolfie.maturity(), (error: unknown) => {
      assert.ok(error instanceof WolfieApiError);
      assert.equal(error.status, 502);
      assert.equal(error.type, "HttpError");
      assert.match(error.message, /Bad gateway/);
      return true;
    });
    await assert.rejects(wolfie.search({ query: "x" }), { name: "WolfieApiError", status: 200, type: "InvalidReply" });
  } finally {
    web.close();
  }
  const nobody = new WolfieClient({ baseUrl: url, token, pack: "desk" }); // closed: no reply
  await assert.rejects(nobody.maturity(), { name: "WolfieApiError", status: 0, type: "NetworkError" });
});

test("a redirect is not followed: the other site's JSON never comes back", async () => {
  const [other, elsewhere] = await fake(() => ({ status: 200, body: '{"stage": "planted"}' }));
  const [url, web] = await fake(() => ({ status: 302, body: "", location: `${other}/maturity` }));
  try {
    const wolfie = new WolfieClient({ baseUrl: url, token, pack: "desk" });
    await assert.rejects(wolfie.maturity(), { name: "WolfieApiError", status: 302, type: "Redirect" });
  } finally {
    web.close();
    elsewhere.close();
  }
});

test("ids are percent-encoded, and '.' and '..' are refused before any request", async () => {
  const wolfie = new WolfieClient({ baseUrl, token, pack: "desk" });
  for (const id of [".", "..", "%2e", "%2E%2e", ""]) {
    await assert.rejects(wolfie.history(id), { name: "WolfieApiError", status: 0, type: "InvalidInput" });
    await assert.rejects(wolfie.feedback(id, { rating: 1 }), { type: "InvalidInput" });
  }
  assert.throws(() => new WolfieClient({ baseUrl, token, pack: ".." }), { type: "InvalidInput" });
  await assert.rejects(wolfie.get("m_x?scope=a#b"), { status: 404, type: "UnknownMemory" });
});

test("installed from its npm pack tarball into a fresh folder, it calls the live api", async () => {
  const work = mkdtempSync(join(tmpdir(), "wolfie-ts-pack-"));
  try {
    // A fresh copy of the sources, as a clone has them: no dist/, so `prepare` must build.
    const client = resolve(here, "..", "..");
    const source = join(work, "source");
    cpSync(client, source, { recursive: true, filter: (path) => !/[/\\](dist|node_modules)$/.test(path) });
    symlinkSync(join(client, "node_modules"), join(source, "node_modules"));
    const quiet = ["--no-audit", "--no-fund", "--loglevel=error"];
    const packed = execFileSync("npm", ["pack", "--pack-destination", work, ...quiet], {
      cwd: source,
      encoding: "utf8",
    });
    const tarball = join(work, packed.trim().split("\n").pop()!);
    const app = join(work, "app");
    execFileSync("mkdir", ["-p", app]);
    writeFileSync(join(app, "package.json"), '{"name": "app", "private": true, "type": "module"}');
    execFileSync("npm", ["install", tarball, "--offline", ...quiet], { cwd: app });
    writeFileSync(
      join(app, "main.mjs"),
      [
        'import { WolfieClient } from "wolfie-client";',
        "const [baseUrl, token] = process.argv.slice(2);",
        'const wolfie = new WolfieClient({ baseUrl, token, pack: "desk" });',
        'await wolfie.remember({ intent: "Packed client intent", response: "it works" });',
        'const found = await wolfie.search({ query: "Packed client intent", k: 1 });',
        "console.log(found.items[0].text);",
      ].join("\n"),
    );
    const out = execFileSync("node", ["main.mjs", baseUrl, token], { cwd: app, encoding: "utf8" });
    assert.equal(out.trim(), "Packed client intent");
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
