// The rtctl version every component reports (the CLI's --version, the node report, the install labels); a
// test keeps it equal to package.json's.

/** The version of this rtctl. */
export const RTCTL_VERSION = '0.1.0';
