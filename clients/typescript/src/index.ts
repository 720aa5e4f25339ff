/**
 * A typed client for the Wolfie REST API (`wolfie api`).
 *
 * Request and result types come from the server's OpenAPI schema (`openapi.json`,
 * generated into `schema.ts` by openapi-typescript), so a field has the name and the
 * type the server gives it. Every failure is a `WolfieApiError` carrying the server's
 * `{"error": {"type", "message"}}`.
 *
 *   const wolfie = new WolfieClient({ baseUrl: "http://127.0.0.1:8080", token, pack: "desk" });
 *   const recall = await wolfie.recall({ query: "missed the breakout, chase it?" });
 *   await wolfie.feedback(recall.episode_id!, { rating: 1 });
 */

import type { components } from "./schema.js";

type Schemas = components["schemas"];
export type RememberBody = Schemas["RememberBody"];
export type RankBody = Schemas["RankBody"];
export type FeedbackBody = Schemas["FeedbackBody"];
export type SignalBody = Schemas["SignalBody"];
export type OutcomeBody = Schemas["OutcomeBody"];
export type ReviseBody = Schemas["ReviseBody"];
export type ForgetBody = Schemas["ForgetBody"];
export type KnowledgeBody = Schemas["KnowledgeBody"];
export type RememberResult = Schemas["RememberResult"];
export type Recall = Schemas["Recall"];
export type RecalledItem = Schemas["RecalledItem"];
export type FeedbackResult = Schemas["FeedbackResult"];
export type RevisionResult = Schemas["RevisionResult"];
export type History = Schemas["History"];
export type ForgetReport = Schemas["ForgetReport"];
export type StoredMemory = Schemas["StoredMemory"];
export type Maturity = Schemas["Maturity"];
export type KnowledgeAdded = Schemas["KnowledgeAdded"];
export type ErrorDetail = Schemas["ErrorDetail"];

export interface WolfieOptions {
  /** Where `wolfie api` listens, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The server's WOLFIE_API_TOKEN (none for a loopback server started without one). */
  token?: string;
  /** The Pack every call goes to, as `wolfie api --pack` named it. */
  pack: string;
  /** Another fetch (tests, proxies); default: the global one (Node 18+, browsers). */
  fetch?: typeof fetch;
}

/**
 * A call that failed, whatever the reply: the server's refusal (its HTTP status and its
 * `{"error": {"type", "message"}}`), a reply that is not Wolfie's JSON (type
 * `InvalidReply`), a redirect (type `Redirect`: the client never follows one, so a
 * request and its token go only to `baseUrl`), no reply at all (status 0, type
 * `NetworkError`) or an id the client refuses to send (status 0, type `InvalidInput`).
 */
export class WolfieApiError extends Error {
  readonly status: number;
  readonly type: string;

  constructor(status: number, error: ErrorDetail) {
    super(`${status} ${error.type}: ${error.message}`);
    this.name = "WolfieApiError";
    this.status = status;
    this.type = error.type;
  }
}

/** A path segment: percent-encoded; `.`, `..` and the empty id are refused, since a URL
 * parser turns them (even as `%2E`) into another route. */
export function segment(id: string, what = "id"): string {
  if (typeof id !== "string" || id === "" || /^(\.|%2e){1,2}$/i.test(id)) {
    throw new WolfieApiError(0, {
      type: "InvalidInput",
      message: `${what} ${JSON.stringify(id)} is not an id: pass one that recall, search or remember returned.`,
    });
  }
  return encodeURIComponent(id);
}

function envelope(payload: unknown): ErrorDetail | undefined {
  const error = (payload as { error?: Partial<ErrorDetail> } | null)?.error;
  return typeof error?.type === "string" && typeof error.message === "string"
    ? { type: error.type, message: error.message }
    : undefined;
}

export class WolfieClient {
  readonly pack: string;
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly fetcher: typeof fetch;

  constructor(options: WolfieOptions) {
    this.pack = options.pack;
    this.base = `${options.baseUrl.replace(/\/+$/, "")}/v1/packs/${segment(options.pack, "pack")}`;
    this.headers = { "content-type": "application/json" };
    if (options.token) this.headers.authorization = `Bearer ${options.token}`;
    this.fetcher = options.fetch ?? fetch;
  }

  /** Store an interaction; a near-duplicate intent merges into the memory it repeats. */
  remember(body: RememberBody): Promise<RememberResult> {
    return this.call("POST", "/memories", body);
  }

  /** Add knowledge chunks (idempotent: ids come from source and position). */
  addKnowledge(body: KnowledgeBody): Promise<KnowledgeAdded> {
    return this.call("POST", "/knowledge", body);
  }

  /** Rank for a query and log an episode: keep `episode_id` to reward it. */
  recall(body: RankBody): Promise<Recall> {
    return this.call("POST", "/recall", body);
  }

  /** Rank without logging (the same order every call). */
  search(body: RankBody): Promise<Recall> {
    return this.call("POST", "/search", body);
  }

  /** Rate an episode: -1 misled .. +1 helped. */
  async feedback(episodeId: string, body: FeedbackBody): Promise<FeedbackResult> {
    return this.call("POST", `/episodes/${segment(episodeId, "episode id")}/feedback`, body);
  }

  /** An implicit signal (accepted, edited, ignored, acted_on, or the Pack's own). */
  async signal(episodeId: string, body: SignalBody): Promise<FeedbackResult> {
    return this.call("POST", `/episodes/${segment(episodeId, "episode id")}/signal`, body);
  }

  /** A measured outcome, e.g. a P&L: the reward is tanh(amount / the Pack's scale). */
  async outcome(episodeId: string, body: OutcomeBody): Promise<FeedbackResult> {
    return this.call("POST", `/episodes/${segment(episodeId, "episode id")}/outcome`, body);
  }

  /** One memory as stored, with its track record. */
  async get(memoryId: string, scope?: string): Promise<StoredMemory> {
    return this.call("GET", this.memory(memoryId, "", scope));
  }

  /** Correct a memory in place (same id); give only the fields to change. */
  async revise(memoryId: string, body: ReviseBody): Promise<RevisionResult> {
    return this.call("PATCH", this.memory(memoryId), body);
  }

  /** A memory's versions, oldest first: created, merged, revised. */
  async history(memoryId: string, scope?: string): Promise<History> {
    return this.call("GET", this.memory(memoryId, "/history", scope));
  }

  /** Forget memory ids, every row of a scope, or what a filter matches (exactly one). */
  forget(body: ForgetBody): Promise<ForgetReport> {
    return this.call("POST", "/forget", body);
  }

  /** Forget one memory; `purge` also removes the older versions that hold it. */
  async forgetMemory(memoryId: string, purge = false): Promise<ForgetReport> {
    return this.call("DELETE", `${this.memory(memoryId)}?purge=${purge}`);
  }

  /** The Pack's five maturity signals and its stage. */
  maturity(): Promise<Maturity> {
    return this.call("GET", "/maturity");
  }

  private memory(memoryId: string, tail = "", scope?: string): string {
    const query = scope === undefined ? "" : `?scope=${encodeURIComponent(scope)}`;
    return `/memories/${segment(memoryId, "memory id")}${tail}${query}`;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await this.fetcher(`${this.base}${path}`, {
        method,
        headers: this.headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: "manual", // never follow: the token and the body go only to baseUrl
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new WolfieApiError(0, { type: "NetworkError", message: `${this.base}: ${message}` });
    }
    if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
      const where = response.headers.get("location") ?? "elsewhere";
      throw new WolfieApiError(response.status, {
        type: "Redirect",
        message: `the server redirected to ${where}; the client follows no redirect`,
      });
    }
    const text = await response.text();
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      payload = undefined;
    }
    if (!response.ok) {
      throw new WolfieApiError(
        response.status,
        envelope(payload) ?? { type: "HttpError", message: `${response.statusText || "error"}: ${text.slice(0, 200)}` },
      );
    }
    if (payload === undefined || payload === null || typeof payload !== "object") {
      throw new WolfieApiError(response.status, {
        type: "InvalidReply",
        message: `the reply is not a JSON object: ${text.slice(0, 200)}`,
      });
    }
    return payload as T;
  }
}
