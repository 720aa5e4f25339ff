// Fails when the committed types differ from what openapi-typescript makes of openapi.json.
import { readFileSync } from "node:fs";

const [committed, fresh] = process.argv.slice(2);
if (readFileSync(committed, "utf8") !== readFileSync(fresh, "utf8")) {
  console.error(`${committed} is stale: run \`npm run generate\` after updating openapi.json.`);
  process.exit(1);
}
