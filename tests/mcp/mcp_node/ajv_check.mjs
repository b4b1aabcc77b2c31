// Checks values against elicitation field schemas with the validator the TypeScript SDK's
// `Server.elicitInput` uses by default (AjvJsonSchemaValidator: ajv with ajv-formats).
// Reads [[schema, value], ...] as JSON on stdin; prints [true|false, ...] on stdout.
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const validator = new AjvJsonSchemaValidator();
const verdicts = JSON.parse(input).map(([schema, value]) => {
  const check = validator.getValidator({
    type: "object",
    properties: { x: schema },
    required: ["x"],
  });
  return check({ x: value }).valid;
});
process.stdout.write(JSON.stringify(verdicts));
