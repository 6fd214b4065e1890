// Time limits of tests that run real tools (apparmor_parser, secilc, sesearch, a C compiler, containers):
// they are correctness tests, so the limit only has to catch a hung tool, never to judge speed. Generous
// because the suite shares two cores with qemu guests; how fast things are is measured in bench/.

/** A test or hook that runs an external tool a bounded number of times. */
export const REAL_TOOL_TIMEOUT_MS = 5 * 60_000;
