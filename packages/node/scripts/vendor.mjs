// Puts the cordon binary in the package (vendor/linux-x64/cordon) before `npm pack`:
// $CORDON_BINARY when set, else the static build of `cargo xtask dist` (target/dist/cordon).
import { chmodSync, copyFileSync, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const source = resolve(process.env.CORDON_BINARY ?? join(here, "..", "..", "..", "target", "dist", "cordon"));
if (!existsSync(source) || !statSync(source).isFile()) {
  console.error(
    `vendor: no cordon binary at ${source}: run \`cargo xtask dist\` first, or set CORDON_BINARY`,
  );
  process.exit(1);
}
const target = join(here, "..", "vendor", "linux-x64", "cordon");
mkdirSync(dirname(target), { recursive: true });
copyFileSync(source, target);
chmodSync(target, 0o755);
console.log(`vendor: ${source} -> ${target}`);
