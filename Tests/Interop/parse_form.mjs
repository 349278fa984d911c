// Parses a multipart/form-data body with Node's built-in fetch (undici) Request.formData()
// and prints its parts as JSON, in order: {name, filename, content_type, size, sha256}.
// usage: node parse_form.mjs BODY_FILE CONTENT_TYPE
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";

const [path, contentType] = process.argv.slice(2);
const body = readFileSync(path);
const form = await new Request("http://localhost/", { method: "POST", headers: { "content-type": contentType }, body }).formData();
const parts = [];
for (const [name, value] of form.entries()) {
  const isFile = typeof value !== "string";
  const bytes = isFile ? Buffer.from(await value.arrayBuffer()) : Buffer.from(value, "utf8");
  parts.push({
    name,
    filename: isFile ? value.name : null,
    content_type: isFile ? value.type : null,
    size: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  });
}
console.log(JSON.stringify(parts));
