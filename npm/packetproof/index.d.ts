// Types of the packetproof API. The documents are those of `--format json`; their JSON
// Schemas ship in ./schemas (outcomes, verify, checks, test-event).

export interface CommonOptions {
  /** Working directory of the run (where harness.toml is looked for). */
  cwd?: string;
  /** Environment of the run (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** `--config FILE`: the settings file. */
  config?: string;
  /** `--google-suffix-file FILE`. */
  googleSuffixFile?: string;
  /** `--asset-example-prompts`. */
  assetExamplePrompts?: 'warn' | 'fail';
}

export interface Finding {
  check: string;
  path: string;
  message: string;
  cause?: string;
}

/** A check that could not apply to a target, and why (never a silent pass). */
export interface Skipped {
  check: string;
  reason: string;
}

export interface Outcome {
  target: string;
  ok: boolean;
  findings: Finding[];
  notes?: string[];
  /** The checks that ran on this target. */
  checks: string[];
  skipped?: Skipped[];
}

/** validate, wire --check (schemas/outcomes.schema.json). */
export interface OutcomesReport {
  formatVersion: 1;
  ok: boolean;
  results: Outcome[];
}

/** verify (schemas/verify.schema.json). */
export interface VerifyReport {
  formatVersion: 1;
  ok: boolean;
  checked: number;
  hold: number;
  failed: number;
  /** The checks that ran on at least one target. */
  checks: string[];
  /** Each distinct (check, reason) that kept a check from running somewhere. */
  skipped: Skipped[];
  results: Outcome[];
}

/** One check of the rule book. */
export interface Rule {
  /** `packet::contract`, `run::completion`, … */
  name: string;
  reads: 'packet' | 'packet-and-request' | 'run' | 'fixture-run' | 'corpus' | 'compile-input' | 'capture' | 'path';
  /** What it needs before it can apply (without it the check is reported as not applicable, with the reason). */
  needs: Array<
    | 'suite-templates'
    | 'agent-templates'
    | 'request'
    | 'producer'
    | `run-file:${string}`
    | 'trusted-key'
    | 'suite'
    | 'configured-provider'
    | 'block-builder-profile'
    | 'builtin-branch-values'
    | 'builder-schema'
    | 'lock'
    | 'evaluator-runs'
    | 'suite-evaluator'
    | 'golden-verdict'
  >;
  /** What holds when the check passes. */
  proves: string;
  /** For a check no fixture can exercise: the test (`file::function`) that proves it can fail. */
  testedBy: string | null;
  /** Whether a suite's `[checks] skip` may turn it off: `"allowed"`, or never, with the reason. */
  skip: 'allowed' | { never: string };
  /** The steps at which it is not yet due (`write`: bless and export). */
  notDueAt: Array<'evaluate' | 'complete' | 'attest' | 'write'>;
}

/** checks (schemas/checks.schema.json). */
export interface RuleBook {
  formatVersion: 1;
  checks: Rule[];
}

/** One line of `test --format json` (schemas/test-event.schema.json): libtest's events as they are. */
export type TestEvent =
  | { type: 'suite'; event: 'started'; test_count: number }
  | {
      type: 'suite';
      event: 'ok' | 'failed';
      passed: number;
      failed: number;
      ignored: number;
      measured: number;
      filtered_out: number;
      exec_time: number;
    }
  | { type: 'test'; event: 'started' | 'ok'; name: string }
  /** An ignored trial says why (libtest's `message`). */
  | { type: 'test'; event: 'ignored'; name: string; message: string }
  | { type: 'test'; event: 'failed'; name: string; stdout: string };

export interface TestResult {
  /** Every trial passed (exit 0; 101 when one failed). */
  ok: boolean;
  exitCode: number;
  events: TestEvent[];
  stderr: string;
}

export interface TestOptions extends CommonOptions {
  filter?: string;
  exact?: boolean;
  /** `count:M/N` or `hash:M/N`. */
  partition?: string;
  /** Also write a JUnit XML report here. */
  junit?: string;
}

export type Api = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';

/** Exit status 2 (bad usage, unreadable input), or no binary for this machine. */
export class PacketproofError extends Error {
  exitCode: number | string | undefined;
  stderr: string;
  args: string[];
}

export function validate(packet: string, options?: CommonOptions): Promise<OutcomesReport>;
export function verify(
  paths: string | string[],
  options?: CommonOptions & { trustedKeys?: string[] },
): Promise<VerifyReport>;
export function wireCheck(packet: string, api: Api, captured: string, options?: CommonOptions): Promise<OutcomesReport>;
export function checks(options?: Pick<CommonOptions, 'cwd' | 'env'>): Promise<RuleBook>;
export function test(options?: TestOptions): Promise<TestResult>;
/** The binary this package runs (PACKETPROOF_BINARY overrides it). */
export function binaryPath(): string;
export const PLATFORMS: Record<string, string>;
