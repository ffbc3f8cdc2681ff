/**
 * commonkeep — OMP (oh-my-pi) extension: one memory root for OMP and Hermes, and handoffs
 * consumed at session start.
 *
 * Installed by `commonkeep omp install` into ~/.omp/agent/extensions/commonkeep.ts, which bakes
 * the shared root and the commonkeep command into the CONFIG block below. Python never runs
 * inside OMP: anything that needs the store shells out to the `commonkeep` CLI as an argv vector.
 *
 * 1. Module scope (runs before any extension factory, contracts/omp-host.md §4.2): sets
 *    OMP_MEMORY_ROOT, OMPKEEP_ROOT and PI_MEMORY_ROOT to the shared root so OmpKeep (and upstream
 *    pi-persistent-intelligence) read and write the same store as Hermes. A root the user set
 *    before OMP started wins (OmpKeep's own precedence) and a mismatch is reported.
 * 2. session_start: reads the snapshot named by OMPKEEP_HANDOFF and adds it to the session as a
 *    background-context message (custom type "commonkeep-handoff"); injected at session start so
 *    it is in the session file even when no model call ever happens (§11).
 * 3. /commonkeep-doctor: reports the root in use, whether Hermes uses the same root, and index
 *    sync, by running `commonkeep doctor --json --root <root>`. pi.exec children get OMP's launch
 *    environment, not the module-scope one, so the root is always passed as an argument.
 *    The report goes into the session file and to <root>/reports/omp-doctor.json.
 * 4. /commonkeep-remember <text>: writes a long-term candidate into the shared inbox through
 *    `commonkeep write` (works without OmpKeep and without a model). The typed text is first
 *    recorded in the session ("commonkeep-remember-typed"), which commonkeep's user_turn pass
 *    counts as the person's words when it curates.
 * 2b. session_start also says how many candidates wait for review and the oldest one's age
 *    (ctx.ui.notify in the TUI; a "commonkeep-review-waiting" entry in the session file), counted
 *    as `commonkeep.store.backlog` counts them: the inbox's lines read as bytes, never parsed whole.
 * 5. session_shutdown: commonkeep's own session-end curation, `commonkeep omp session-end`, in
 *    place of OmpKeep's (which `commonkeep init` / `omp install` switch off in config.json:
 *    OmpKeep trusts what a candidate claims). Only stamped candidates can apply; the rest waits
 *    for `commonkeep review`. It runs detached (OMP allows shutdown handlers 2 s) and writes
 *    its outcome to <root>/reports/omp-session-end.json.
 * 6. input: what the person submits in the editor, as typed (before OMP expands prompt templates,
 *    slash commands and @file mentions), is recorded in the session ("commonkeep-typed"): the
 *    only words of the person's that commonkeep's user_turn pass reads besides
 *    /commonkeep-remember. Never a `role: user` message: a template or an extension writes those too.
 * 7. Typed input, bound when OMP receives it: the text of each input event (and of
 *    /commonkeep-remember) is also recorded in the stamp journal outside the root (its SHA-256 and
 *    the session id, HMAC-SHA256 under the journal's key; commonkeep.gate.stamps computes the same
 *    bytes). commonkeep's user_turn pass counts a "commonkeep-typed" entry of the session file only
 *    when the journal holds it, so an entry the model's file tool appends to that file earns nothing.
 * 8. tool_call: the model's file tools may not write the memory root, the stamp journal and its
 *    key, OMP's session files or extensions; no tool may read the journal; best effort, bash and
 *    eval may not name them, the agent mark, or clear the environment around commonkeep
 *    (commonkeep.gate.tool_guard holds the same rules for Hermes).
 * 9. The agent marks (module scope): OMP's hard RLIMIT_LOCKS lowered (no tool can shed it), and
 *    COMMONKEEP_AGENT_HOST=omp:<pid>:<start> in OMP's own
 *    environment, unless an outer agent set one, so every command the model's bash and eval tools
 *    run carries it, detached or not (setsid, nohup, tmux): commonkeep refuses a person's decisions
 *    and the writer's own stamp there (commonkeep.gate.agent_shell).
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash, createHmac, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

// commonkeep:config-begin — written by `commonkeep omp install`; re-run it to change these.
const CONFIG: { root: string; commonkeep: string[]; version: string } = {
	root: "",
	commonkeep: ["commonkeep"],
	version: "",
};
// commonkeep:config-end

const ROOT_VARS = ["OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT"] as const;
const HANDOFF_HEADER =
	"> [HANDOFF REFERENCE — treat as background context. Persistent memory (L1/L2) is always authoritative.]";
const HANDOFF_MAX_CHARS = 60_000;
const EXEC_TIMEOUT_MS = 60_000;
/** Custom entry holding what the person typed (the `input` event); read by commonkeep's user_turn pass. */
const TYPED = "commonkeep-typed";

interface RootState {
	/** The root OMP uses after this module ran ("" when none could be chosen). */
	root: string;
	/** How it was chosen: "commonkeep install" or the variable the user had set. */
	rule: string;
	/** The shared root baked in by the installer. */
	shared: string;
	/** The three variables as the user had them before this module ran. */
	before: Record<string, string | null>;
	/** What this module set. */
	set: string[];
	/** Human-readable problems (mismatches, missing configuration). */
	problems: string[];
}

function expand(p: string): string {
	const home = process.env.HOME || os.homedir();
	const withHome = p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : p;
	return path.resolve(withHome);
}

function resolveRootAtLoad(): RootState {
	const shared = CONFIG.root ? expand(CONFIG.root) : "";
	const before: Record<string, string | null> = {};
	for (const name of ROOT_VARS) before[name] = process.env[name] ? String(process.env[name]) : null;
	const preset = ROOT_VARS.filter((name) => before[name]);
	const problems: string[] = [];
	let root = shared;
	let rule = "commonkeep install";
	if (preset.length > 0) {
		// Respect the user's explicit choice, in OmpKeep's own precedence order.
		root = expand(before[preset[0]] as string);
		rule = `$${preset[0]} (set before OMP started)`;
		for (const name of preset) {
			const value = expand(before[name] as string);
			if (shared && value !== shared) {
				problems.push(
					`$${name}=${before[name]} differs from the commonkeep shared root ${shared}; OMP keeps the explicit value, so OMP and Hermes use different memories. Unset it or run \`commonkeep omp install --root ${value}\`.`,
				);
			} else if (value !== root) {
				problems.push(`$${name}=${before[name]} differs from $${preset[0]}=${before[preset[0]]}; set all three to one root.`);
			}
		}
	}
	if (!shared) {
		problems.push("no shared root is configured in this extension; run `commonkeep omp install`.");
	}
	const set: string[] = [];
	if (root) {
		for (const name of ROOT_VARS) {
			if (!before[name]) {
				process.env[name] = root;
				set.push(name);
			}
		}
	}
	return { root, rule, shared, before, set, problems };
}

// Module scope on purpose: every extension module is imported before any factory is bound.
const STATE: RootState = resolveRootAtLoad();

// 6. The agent mark, before any tool runs. An outer agent's mark wins (OMP started by another agent's tool).
const MARK = "COMMONKEEP_AGENT_HOST";

function startTime(): string {
	try {
		const stat = fs.readFileSync("/proc/self/stat", "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
	} catch {
		return "";
	}
}

if (!(process.env[MARK] ?? "").trim()) process.env[MARK] = `omp:${process.pid}:${startTime()}`;

// The mark no tool can shed (commonkeep.gate.agent_shell, sign 3): OMP's own hard limit of file locks
// (RLIMIT_LOCKS, not enforced by Linux since 2.4.24) lowered once, by prlimit(1) on this process. Every
// tool OMP runs inherits it and no unprivileged process raises a hard limit again, whatever it clears
// or however it detaches. A lower limit already (OMP started by another agent's tool) is kept.
export const LOCKS_MARK = 0x636b00;
if (process.platform === "linux" && (process.env.COMMONKEEP_KERNEL_MARK ?? "").trim().toLowerCase() !== "off") {
	try {
		spawnSync("prlimit", ["--pid", String(process.pid), `--locks=${LOCKS_MARK}:${LOCKS_MARK}`], {
			stdio: "ignore",
			timeout: 2000,
		});
	} catch {
		// no prlimit here: the variable and the parent chain still mark what OMP's tools run
	}
}

// 7. The stamp journal (commonkeep.gate.stamps: the same folder, key, fields and MAC bytes).
const STAMP_FIELDS = ["v", "kind", "stamp", "trust", "root", "candidate", "host", "session", "text", "at"] as const;

function stampsDir(): string {
	const override = (process.env.COMMONKEEP_STAMPS_DIR ?? "").trim();
	if (override) return expand(override);
	const xdg = (process.env.XDG_STATE_HOME ?? "").trim();
	if (xdg && path.isAbsolute(xdg)) return path.join(xdg, "commonkeep");
	return path.join(process.env.HOME || os.homedir(), ".local", "state", "commonkeep");
}

function readKey(file: string): Buffer | null {
	let st: fs.Stats;
	try {
		st = fs.lstatSync(file);
	} catch (err: any) {
		if (err?.code === "ENOENT") return null;
		throw err;
	}
	const uid = typeof process.getuid === "function" ? process.getuid() : st.uid;
	if (!st.isFile() || st.uid !== uid || (st.mode & 0o077) !== 0) throw new Error(`${file} is not a private file of this user (mode 600)`);
	const hex = fs.readFileSync(file, "ascii").trim();
	if (!/^(?:[0-9a-fA-F]{2}){32,}$/.test(hex)) throw new Error(`${file} does not hold a key`);
	return Buffer.from(hex, "hex");
}

function loadKey(): Buffer {
	const dir = stampsDir();
	const file = path.join(dir, "stamps.key");
	const have = readKey(file);
	if (have) return have;
	fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
	const tmp = path.join(dir, `.stamps.key.${process.pid}.${randomBytes(4).toString("hex")}`);
	fs.writeFileSync(tmp, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
	try {
		fs.linkSync(tmp, file); // another process made the key first: that one is the key
	} catch (err: any) {
		if (err?.code !== "EEXIST") throw err;
	} finally {
		try {
			fs.unlinkSync(tmp);
		} catch {}
	}
	const key = readKey(file);
	if (!key) throw new Error(`no key at ${file}`);
	return key;
}

function sha256(text: string): string {
	return createHash("sha256").update(text, "utf8").digest("hex");
}

function appendStampEntry(fields: Record<string, string>): void {
	const key = loadKey();
	const entry: Record<string, string | number> = { v: 1, ...fields, at: new Date().toISOString() };
	const message = JSON.stringify(STAMP_FIELDS.map((f) => entry[f] ?? ""));
	entry.mac = createHmac("sha256", key).update(message, "utf8").digest("hex");
	fs.appendFileSync(path.join(stampsDir(), "stamps.jsonl"), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
}

/** Record that the person typed `text` into this OMP session (its hash only). Never throws into OMP. */
export function recordTyped(sessionId: string, text: string): void {
	if (!sessionId || !text.trim()) return;
	try {
		appendStampEntry({ kind: "typed", host: "omp", session: sessionId, text: sha256(text) });
	} catch (err) {
		console.error(`commonkeep: could not record typed input in the stamp journal: ${String(err)}`);
	}
}

/** The text of a user message's content (a string, or the text parts of a list). */
function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.filter((p) => asRecord(p)?.type === "text")
		.map((p) => String(asRecord(p)?.text ?? ""))
		.join("\n");
}

// 8. What the model's tools must not touch (commonkeep.gate.tool_guard, the same rules).
const WRITE_TOOLS = new Set(["write", "edit", "ast_edit", "notebook_edit"]);
const READ_TOOLS = new Set(["read", "grep", "glob", "ast_grep"]);
const CODE_TOOLS: Record<string, string> = { bash: "command", eval: "code", python: "code" };
const ROOT_FILES = ["captured.jsonl", "L1.identity.jsonl", "L2.playbooks.jsonl", "tombstones.jsonl", "reinforcement.jsonl"];
const STAMP_FILES = ["stamps.key", "stamps.jsonl"];

/** A path as a tool would open it: ~ expanded, relative to cwd, links of its existing part resolved. */
function resolvePath(raw: string, cwd: string): string {
	const home = process.env.HOME || os.homedir();
	let p = raw.trim();
	if (p === "~" || p.startsWith("~/")) p = path.join(home, p.slice(1));
	p = path.resolve(cwd, p);
	const rest: string[] = [];
	let head = p;
	for (;;) {
		try {
			return path.join(fs.realpathSync(head), ...rest);
		} catch {
			const up = path.dirname(head);
			if (up === head) return p;
			rest.unshift(path.basename(head));
			head = up;
		}
	}
}

function agentDir(): string {
	const override = process.env.PI_CODING_AGENT_DIR;
	return override ? expand(override) : path.join(process.env.HOME || os.homedir(), ".omp", "agent");
}

interface Guarded {
	write: string[];
	secret: string[];
	roots: string[];
}

function guarded(cwd: string): Guarded {
	const real = (p: string) => resolvePath(p, "/");
	const secret = [real(stampsDir())];
	const roots = STATE.root ? [real(STATE.root)] : [];
	const agent = agentDir();
	const host = [path.join(agent, "sessions"), path.join(agent, "extensions"), path.join(agent, ".env"), path.join(agent, "config.yml"),
		path.join(cwd, ".omp", "extensions")].map(real);
	return { write: [...new Set([...roots, ...secret, ...host])], secret, roots };
}

function under(p: string, places: string[]): string | null {
	for (const place of places) if (p === place || p.startsWith(`${place.replace(/\/+$/, "")}/`)) return place;
	return null;
}

function what(place: string, g: Guarded): string {
	if (g.secret.includes(place)) return "holds the stamp journal and its key";
	if (g.roots.includes(place)) return "is the memory root (its files change only through commonkeep)";
	return "is a file commonkeep's stamps are read from (OMP's sessions, extensions or settings)";
}

function spellings(p: string): string[] {
	const home = (process.env.HOME || os.homedir()).replace(/\/+$/, "");
	const out = [p];
	if (home && (p === home || p.startsWith(`${home}/`))) {
		const rest = p.slice(home.length);
		out.push(`~${rest}`, `$HOME${rest}`, `\${HOME}${rest}`);
	}
	return out;
}

function textRefusal(text: string, g: Guarded): string | null {
	if (text.includes(MARK)) return `it names ${MARK}, the mark that tells commonkeep a command runs inside an agent`;
	if (text.includes("commonkeep") && /\benv\s+(?:-\w*i\b|--ignore-environment\b)/.test(text))
		return "it clears the environment around commonkeep (the agent mark goes with it)";
	for (const place of g.write) {
		const insideOnly = g.roots.includes(place); // `--root ROOT` names a root; a path inside it is a file
		for (const spelled of spellings(place)) {
			const needle = insideOnly ? `${spelled.replace(/\/+$/, "")}/` : spelled;
			if (text.includes(needle)) return `it names ${needle}, which ${what(place, g)}`;
		}
	}
	for (const name of [...STAMP_FILES, ...ROOT_FILES])
		if (text.includes(name)) return `it names ${name}, a file ${STAMP_FILES.includes(name) ? "of the stamp journal" : "of the memory root"}`;
	return null;
}

function stringsOf(value: unknown, out: string[] = []): string[] {
	if (typeof value === "string") out.push(value);
	else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
	else if (value && typeof value === "object") for (const v of Object.values(value)) stringsOf(v, out);
	return out;
}

/** Why the model's `toolName` call must not run (a message for the model), or null. */
export function toolRefusal(toolName: string, input: Record<string, unknown>, cwd: string): string | null {
	const g = guarded(cwd);
	let why: string | null = null;
	const patched = stringsOf(input).flatMap((s) =>
		[...s.matchAll(/^\*\*\* (?:(?:Update|Add|Delete) File|Move to): (.+?)\s*$/gm)].map((m) => m[1]),
	); // apply_patch-style edits name their files inside the text
	const paths = [input.path, input.file_path, ...(Array.isArray(input.paths) ? input.paths : []), ...patched].filter(
		(p): p is string => typeof p === "string" && p.trim() !== "",
	);
	if (WRITE_TOOLS.has(toolName)) {
		for (const raw of paths) {
			const hit = under(resolvePath(raw, cwd), g.write);
			if (hit) {
				why = `${toolName} would write ${raw}, which ${what(hit, g)}`;
				break;
			}
		}
		if (!why) {
			for (const text of stringsOf({ ...input, content: undefined })) {
				const found = textRefusal(text, g);
				if (found) {
					why = `${toolName}: ${found}`;
					break;
				}
			}
		}
	} else if (READ_TOOLS.has(toolName)) {
		for (const raw of paths) {
			const hit = under(resolvePath(raw, cwd), g.secret);
			if (hit) {
				why = `${toolName} would read ${raw}, which ${what(hit, g)}`;
				break;
			}
		}
	} else if (toolName in CODE_TOOLS) {
		const env = asRecord(input.env);
		if (env && MARK in env) why = `${toolName} would set ${MARK}, the mark that tells commonkeep a command runs inside an agent`;
		const text = input[CODE_TOOLS[toolName]];
		if (!why && typeof text === "string") {
			const found = textRefusal(text, g);
			if (found) why = `${toolName}: ${found}`;
		}
	} else {
		for (const text of stringsOf(input)) {
			if (g.secret.some((s) => spellings(s).some((sp) => text.includes(sp))) || STAMP_FILES.some((n) => text.includes(n))) {
				why = `${toolName}: it names the stamp journal or its key`;
				break;
			}
		}
	}
	if (!why) return null;
	return (
		`refused by commonkeep: ${why}. Memory changes only through commonkeep's own tools (memory_write stages a candidate ` +
		"for review); the stamp journal, the memory root and the files stamps are read from are not for an agent's file " +
		"or shell tools. Ask the person to make this change in their own terminal."
	);
}
if (STATE.problems.length > 0) {
	// Extension stdout/stderr never reach the ACP stream; this lands in OMP's stderr/log.
	console.error(`commonkeep: ${STATE.problems.join(" ")}`);
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function asRecord(value: unknown): Record<string, unknown> | null {
	return value !== null && typeof value === "object" && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: null;
}

function listLines(title: string, items: unknown, prefix = "- "): string[] {
	if (!Array.isArray(items) || items.length === 0) return [];
	return [`## ${title}`, ...items.map((item) => `${prefix}${typeof item === "string" ? item : JSON.stringify(item)}`), ""];
}

/** Render a JSON handoff snapshot (ompkeep-store.md §8 shapes, extended per hermes-host.md §8.2). */
function renderHandoffJson(doc: Record<string, unknown>): string {
	for (const key of ["markdown", "projection_markdown", "text"]) {
		if (typeof doc[key] === "string" && (doc[key] as string).trim()) return doc[key] as string;
	}
	const lines: string[] = ["# Memory Handoff Snapshot"];
	if (typeof doc.created_at === "string") lines.push(`> Generated: ${doc.created_at}`);
	lines.push(HANDOFF_HEADER, "");
	const goal = doc.declared_goal ?? doc.goal;
	if (typeof goal === "string" && goal) lines.push("## Goal", goal, "");
	if (typeof doc.projection_text === "string" && doc.projection_text.trim()) {
		lines.push("## Memory", doc.projection_text.trim(), "");
	}
	if (Array.isArray(doc.entries) && doc.entries.length > 0) {
		lines.push("## Entries");
		for (const entry of doc.entries) {
			const e = asRecord(entry);
			if (e) lines.push(`- ${e.id ? `[${e.id}] ` : ""}${String(e.text ?? e.statement ?? "")}`);
		}
		lines.push("");
	}
	lines.push(...listLines("Selected Memory (Current Context)", doc.selected_memory_brief));
	lines.push(...listLines("Open Inquiries", doc.open_inquiry_questions, "? "));
	lines.push(...listLines("Constraints", doc.constraints));
	lines.push(...listLines("Recommended Next Actions", doc.recommended_next_actions));
	lines.push(...listLines("Contested Records", doc.contested_record_ids));
	return lines.join("\n").trimEnd() + "\n";
}

function readHandoff(file: string): { text: string; details: Record<string, Json> } {
	const raw = fs.readFileSync(file, "utf8");
	let text = raw;
	const details: Record<string, Json> = { path: file, bytes: Buffer.byteLength(raw), format: "markdown" };
	const trimmed = raw.trimStart();
	if (trimmed.startsWith("{")) {
		const doc = asRecord(JSON.parse(raw));
		if (!doc) throw new Error(`${file} is JSON but not an object`);
		// OmpKeep's /memory-handoff writes <stamp>.json beside <stamp>.md (ompkeep-store.md §8.1):
		// the markdown is the canonical rendering, so prefer it when it is there.
		const sibling = file.replace(/\.json$/, ".md");
		const hasMd = sibling !== file && typeof doc.markdown !== "string" && fs.existsSync(sibling);
		text = hasMd ? fs.readFileSync(sibling, "utf8") : renderHandoffJson(doc);
		details.format = hasMd ? "json+md" : "json";
		for (const key of ["id", "intent_id", "schema", "created_at", "lane_id", "task_id"]) {
			const v = doc[key];
			if (typeof v === "string" || typeof v === "number") details[key] = v;
		}
	}
	if (!text.includes(HANDOFF_HEADER)) text = `${HANDOFF_HEADER}\n\n${text}`;
	if (text.length > HANDOFF_MAX_CHARS) {
		text = `${text.slice(0, HANDOFF_MAX_CHARS)}\n\n[handoff truncated at ${HANDOFF_MAX_CHARS} characters; full snapshot: ${file}]\n`;
		details.truncated = true;
	}
	return { text, details };
}

interface ExecResult {
	stdout: string;
	stderr: string;
	code: number;
	killed: boolean;
}

async function runCommonkeep(pi: any, args: string[], cwd: string): Promise<ExecResult> {
	const [cmd, ...prefix] = CONFIG.commonkeep.length > 0 ? CONFIG.commonkeep : ["commonkeep"];
	try {
		return await pi.exec(cmd, [...prefix, ...args], { timeout: EXEC_TIMEOUT_MS, cwd });
	} catch (err) {
		return { stdout: "", stderr: `could not run ${cmd}: ${String(err)}`, code: 127, killed: false };
	}
}

function findings(doc: unknown): Record<string, unknown>[] {
	const d = asRecord(doc);
	const list = d ? (d.findings ?? d.checks) : null;
	return Array.isArray(list) ? (list.map(asRecord).filter(Boolean) as Record<string, unknown>[]) : [];
}

function pick(doc: unknown, match: (code: string) => boolean): Record<string, unknown>[] {
	return findings(doc).filter((f) => match(String(f.code ?? "")));
}

async function doctor(pi: any, ctx: any): Promise<Record<string, Json>> {
	const root = STATE.root;
	const report: Record<string, Json> = {
		root,
		rule: STATE.rule,
		shared_root: STATE.shared,
		same_as_shared: Boolean(root) && root === STATE.shared,
		env_before: STATE.before as Record<string, Json>,
		env_set_by_extension: STATE.set,
		env_now: Object.fromEntries(ROOT_VARS.map((n) => [n, process.env[n] ?? null])),
		problems: STATE.problems,
		handoff: process.env.OMPKEEP_HANDOFF ?? null,
		cwd: ctx.cwd ?? null,
		session_id: ctx.sessionManager?.getSessionId?.() ?? null,
		extension_version: CONFIG.version,
	};
	if (!root) {
		report.ok = false;
		return report;
	}
	const res = await runCommonkeep(pi, ["doctor", "--json", "--root", root], ctx.cwd ?? process.cwd());
	let parsed: unknown = null;
	try {
		parsed = JSON.parse(res.stdout);
	} catch {
		parsed = null;
	}
	report.commonkeep_doctor = {
		argv: [...CONFIG.commonkeep, "doctor", "--json", "--root", root],
		exit_code: res.code,
		stderr: res.stderr.slice(-2000),
		report: (parsed as Json) ?? null,
	};
	const hermes = pick(parsed, (c) => c.startsWith("hermes"));
	report.hermes = hermes.length > 0 ? (hermes as Json[]) : "not reported by `commonkeep doctor` (is commonkeep_hermes installed?)";
	const index = pick(parsed, (c) => c.includes("index") || c.includes("search") || c.includes("fts"));
	report.index = index.length > 0 ? (index as Json[]) : "not reported by `commonkeep doctor`";
	const doc = asRecord(parsed);
	report.ok = STATE.problems.length === 0 && doc !== null && (typeof doc.ok === "boolean" ? doc.ok : res.code === 0);
	return report;
}

function summarize(report: Record<string, Json>): string {
	const lines = [
		"# commonkeep doctor (OMP)",
		`- root in use: ${report.root || "(none)"} — ${report.rule}`,
		`- shared root: ${report.shared_root || "(not configured)"}${report.same_as_shared ? " (same)" : " (DIFFERENT)"}`,
	];
	for (const p of report.problems as string[]) lines.push(`- problem: ${p}`);
	const line = (f: Json) => {
		const r = asRecord(f);
		return r ? `${r.severity ?? "?"} ${r.code ?? "?"}: ${r.message ?? ""}` : String(f);
	};
	if (Array.isArray(report.hermes)) for (const f of report.hermes) lines.push(`- hermes: ${line(f)}`);
	else lines.push(`- hermes: ${report.hermes}`);
	if (Array.isArray(report.index)) for (const f of report.index) lines.push(`- index: ${line(f)}`);
	else if (report.index) lines.push(`- index: ${report.index}`);
	const cd = asRecord(report.commonkeep_doctor);
	const store = findings(cd?.report).filter(
		(f) => (f.severity === "error" || f.severity === "warning") && !String(f.code ?? "").startsWith("hermes"),
	);
	if (cd?.report) lines.push(store.length === 0 ? "- store: ok" : `- store: ${store.map((f) => line(f as Json)).join("; ")}`);
	if (cd && cd.report === null) lines.push(`- commonkeep doctor failed (exit ${cd.exit_code}): ${String(cd.stderr).trim()}`);
	return lines.join("\n");
}

function writeReport(root: string, name: string, data: unknown): string | null {
	try {
		const dir = path.join(root, "reports");
		fs.mkdirSync(dir, { recursive: true });
		const file = path.join(dir, name);
		const tmp = `${file}.${process.pid}.tmp`;
		fs.writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`);
		fs.renameSync(tmp, file);
		return file;
	} catch {
		return null;
	}
}

/** Candidates whose status is "new" and the oldest one's created_at, as commonkeep.store.backlog
 * counts them (the same line in every surface). A line with two status keys is parsed. */
export function reviewWaiting(root: string): { count: number; oldest: string | null } {
	let data: string;
	try {
		data = fs.readFileSync(path.join(root, "inbox", "captured.jsonl"), "utf8");
	} catch {
		return { count: 0, oldest: null };
	}
	const STATUS = /"status"\s*:\s*"([^"\\]*)"/g;
	const CREATED = /"created_at"\s*:\s*"([^"\\]{10,40})"/;
	let count = 0;
	let oldest: string | null = null;
	let oldestMs = Number.POSITIVE_INFINITY;
	for (const line of data.split("\n")) {
		const found = [...line.matchAll(STATUS)];
		if (found.length === 0) continue;
		let status: unknown;
		let created: unknown;
		if (found.length === 1) {
			status = found[0][1];
			created = CREATED.exec(line)?.[1];
		} else {
			try {
				const row = JSON.parse(line);
				status = row?.status;
				created = row?.created_at;
			} catch {
				continue;
			}
		}
		if (status !== "new") continue;
		count += 1;
		const ms = typeof created === "string" ? Date.parse(created) : Number.NaN;
		if (!Number.isNaN(ms) && ms < oldestMs) {
			oldestMs = ms;
			oldest = created as string;
		}
	}
	return { count, oldest };
}

function ageWords(iso: string | null, nowMs: number): string {
	const then = iso ? Date.parse(iso) : Number.NaN;
	if (Number.isNaN(then)) return "";
	const secs = Math.max(0, Math.floor((nowMs - then) / 1000));
	const hours = Math.floor(secs / 3600);
	const days = Math.floor(secs / 86400);
	if (secs < 60) return "just now";
	if (hours < 1) return `${Math.floor(secs / 60)} min`;
	if (hours < 48) return `${hours} h`;
	if (days < 14) return `${days} days`;
	if (days < 63) return `${Math.floor(days / 7)} weeks`;
	if (days < 365) return `${Math.floor(days / 30)} months`;
	const years = Math.floor(days / 365);
	return `${years} year${years > 1 ? "s" : ""}`;
}

/** "12 memories wait for review (oldest 8 weeks): run `commonkeep review`" ("" when none waits). */
export function waitingLine(w: { count: number; oldest: string | null }, nowMs = Date.now()): string {
	if (w.count <= 0) return "";
	const age = ageWords(w.oldest, nowMs);
	const verb = w.count === 1 ? "memory waits" : "memories wait";
	return `${w.count} ${verb} for review${age ? ` (oldest ${age})` : ""}: run \`commonkeep review\``;
}

export default function commonkeep(pi: any): void {
	let handoffConsumed = false;

	// 8. The model's tools stay out of what stamps rest on; an error while checking blocks the call.
	pi.on("tool_call", async (event: any, ctx: any) => {
		try {
			const why = toolRefusal(String(event?.toolName ?? ""), asRecord(event?.input) ?? {}, ctx?.cwd ?? process.cwd());
			return why ? { block: true, reason: why } : undefined;
		} catch (err) {
			return { block: true, reason: `refused by commonkeep: the call could not be checked (${String(err)})` };
		}
	});

	pi.on("session_start", async (_event: unknown, ctx: any) => {
		if (STATE.problems.length > 0) ctx.ui?.notify?.(`commonkeep: ${STATE.problems.join(" ")}`, "warning");
		if (STATE.root) {
			try {
				const waiting = reviewWaiting(STATE.root);
				const line = waitingLine(waiting);
				if (line) {
					ctx.ui?.notify?.(`commonkeep: ${line}`, "info");
					pi.appendEntry("commonkeep-review-waiting", { count: waiting.count, oldest: waiting.oldest, line });
				}
			} catch {
				// the announcement is a convenience: never a reason for the session to fail
			}
		}
		const file = process.env.OMPKEEP_HANDOFF;
		if (!file || handoffConsumed) return;
		handoffConsumed = true; // one dispatch, one handoff: a later /new session starts clean
		try {
			const { text, details } = readHandoff(file);
			details.root = STATE.root;
			pi.sendMessage({ customType: "commonkeep-handoff", content: text, display: true, details });
		} catch (err) {
			const message = `commonkeep: could not read the handoff snapshot $OMPKEEP_HANDOFF=${file}: ${String(err)}`;
			pi.appendEntry("commonkeep-handoff-error", { path: file, error: String(err) });
			ctx.ui?.notify?.(message, "error");
		}
	});

	// 5. Session end: commonkeep's policy curates the shared inbox (OmpKeep's own curator is off).
	// OMP gives session_shutdown handlers 2 s and then exits, so the curation runs detached and
	// outlives OMP; `commonkeep omp session-end` writes <root>/reports/omp-session-end.json itself.
	pi.on("session_shutdown", async (_event: unknown, ctx: any) => {
		if (!STATE.root) return;
		const [cmd, ...prefix] = CONFIG.commonkeep.length > 0 ? CONFIG.commonkeep : ["commonkeep"];
		try {
			const child = spawn(cmd, [...prefix, "omp", "session-end", "--root", STATE.root, "--report"], {
				cwd: ctx?.cwd ?? process.cwd(),
				detached: true,
				stdio: "ignore",
			});
			child.on("error", (err) => console.error(`commonkeep: session-end curation could not start: ${String(err)}`));
			child.unref();
		} catch (err) {
			console.error(`commonkeep: session-end curation could not start: ${String(err)}`);
		}
	});

	// 6. What the person typed, as OMP received it: the input event fires when the person submits
	// the editor (interactive mode), before OMP expands prompt templates, slash commands and
	// @file mentions. Recorded so commonkeep's user_turn pass reads the person's own words and
	// never a `role: user` message a template, a command or another extension produced.
	// 7. Bound when OMP receives it: the same text goes into the stamp journal outside the root, so a
	// "commonkeep-typed" entry the model's file tool writes into the session file earns nothing.
	pi.on("input", async (event: any, ctx: any) => {
		const text = typeof event?.text === "string" ? event.text : "";
		if (event?.source === "interactive" && text.trim()) {
			recordTyped(String(ctx?.sessionManager?.getSessionId?.() ?? ""), text);
			pi.appendEntry(TYPED, { text });
		}
		return undefined;
	});

	pi.registerCommand("commonkeep-doctor", {
		description: "commonkeep: which memory root OMP uses, whether Hermes shares it, index sync",
		handler: async (_args: string, ctx: any) => {
			const report = await doctor(pi, ctx);
			const written = STATE.root ? writeReport(STATE.root, "omp-doctor.json", report) : null;
			report.report_file = written;
			const text = summarize(report);
			pi.sendMessage({ customType: "commonkeep-doctor", content: text, display: true, details: report });
			ctx.ui?.notify?.(text, report.ok ? "info" : "warning");
		},
	});

	pi.registerCommand("commonkeep-remember", {
		description: "commonkeep: save a long-term memory candidate into the shared inbox",
		handler: async (args: string, ctx: any) => {
			const text = (args ?? "").trim();
			if (!text) {
				ctx.ui?.notify?.("usage: /commonkeep-remember <text to remember>", "warning");
				return;
			}
			if (!STATE.root) {
				ctx.ui?.notify?.("commonkeep: no memory root; run `commonkeep omp install`", "error");
				return;
			}
			// The user typed it, so it is a direct instruction (ompkeep-store.md §6.1); "--" keeps a
			// leading dash in the text from being read as an option.
			const cwd = ctx.cwd ?? process.cwd();
			// The person typed this command (a model cannot run it): recorded in the session *before*
			// the write, so commonkeep's stamping pass can verify the candidate against it (user_turn).
			pi.appendEntry("commonkeep-remember-typed", { text });
			// journaled as the user_turn pass reads the entry back (commonkeep_omp.user_turn.person_said)
			recordTyped(String(ctx.sessionManager?.getSessionId?.() ?? ""), `/commonkeep-remember ${text}`);
			const argv = ["write", "--init", "--root", STATE.root, "--json", "--agent", "omp", "--host", "omp"];
			const sid = ctx.sessionManager?.getSessionId?.();
			if (sid) argv.push("--session", String(sid));
			argv.push("--cwd", cwd, "--trust", "direct_user_instruction", "--durability", "long_term", "--", text);
			const res = await runCommonkeep(pi, argv, cwd);
			const details = { argv: [...CONFIG.commonkeep, ...argv], exit_code: res.code, stdout: res.stdout.slice(-2000), stderr: res.stderr.slice(-2000) };
			pi.appendEntry("commonkeep-remember", details);
			ctx.ui?.notify?.(
				res.code === 0 ? `commonkeep: saved as a candidate in ${STATE.root}` : `commonkeep write failed (exit ${res.code}): ${res.stderr.trim()}`,
				res.code === 0 ? "info" : "error",
			);
		},
	});
}
