// Type-checked only (tsc --strict, never run): the package's types as a user writes against them.
// `@ts-expect-error` lines must stay errors: they pin that the declarations are not `any`.
import init, {
  complete,
  completeExpression,
  evaluate,
  evaluateExpression,
  hover,
  hoverExpression,
  initSync,
  loadSchemaDescriptions,
  loadSchemas,
  PolicySet,
  supportedVersions,
  typecheck,
  version,
} from "../../../pkg/vap_eval.js";
import type {
  AdmissionResponse,
  CompletionItem,
  CompletionResult,
  ExpressionWarning,
  HoverResult,
  Diagnostic,
  Document,
  EvaluateInput,
  EvaluateResult,
  ExpressionOptions,
  ExpressionResult,
  ParamEvaluation,
  PolicySetOptions,
  PolicyTrace,
  RequestDocuments,
  Severity,
  SourceRef,
  Status,
  TypecheckResult,
  ValidationResult,
} from "../../../pkg/vap_eval.js";

export async function browser(): Promise<void> {
  await init();
}

export function node(bytes: Uint8Array): void {
  initSync({ module: bytes });
}

const manifests = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n";
const object: Document = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } };

export function useEvaluate(): string[] {
  const input: EvaluateInput = { manifests, object, oldObject: null, request: "operation: UPDATE", kubernetesVersion: "1.37" };
  const r: EvaluateResult = evaluate(input);
  const fromText: EvaluateResult = evaluate("manifests: ''");
  const fromList: EvaluateResult = evaluate({ manifests: [manifests, object] });
  const response: AdmissionResponse = r.response;
  const allowed: boolean = response.allowed && fromText.response.allowed && fromList.response.allowed;
  const status: Status | undefined = response.status;
  const code: number | undefined = status?.code;
  const kind: "Status" | undefined = status?.kind;
  const annotations: Record<string, string> = response.auditAnnotations;
  const operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT" | undefined = r.request?.operation;
  const groups: string[] | undefined = r.request?.userInfo.groups;
  const policies: PolicyTrace[] = r.policies;
  const evaluation: ParamEvaluation | undefined = policies[0]?.bindings[0]?.evaluations[0];
  const validation: ValidationResult | undefined = evaluation?.validations[0];
  const decision: "admit" | "deny" | "error" | undefined = validation?.decision;
  const value: unknown = evaluation?.variables[0]?.value;
  const cost: number | undefined = evaluation?.cost.validations;
  // @ts-expect-error unknown input field
  evaluate({ manifest: manifests });
  // @ts-expect-error manifests must be text or a list of documents
  evaluate({ manifests: 5 });
  // @ts-expect-error decision is a closed set
  const wrong: "allow" | undefined = validation?.decision;
  return [String(allowed), String(code), String(kind), Object.keys(annotations).join(), String(operation), String(groups), String(decision), String(value), String(cost), String(wrong)];
}

export function useDiagnostics(d: Diagnostic): string {
  const severity: Severity = d.severity;
  const source: SourceRef | undefined = d.source;
  let where = "";
  if (source?.kind === "expression") where = source.expression;
  else if (source?.kind === "manifest") where = `document ${source.document}`;
  else if (source?.kind === "input") where = source.name;
  const start: number | undefined = d.start;
  const end: number | undefined = d.end;
  const line: number | undefined = d.line;
  const help: string | undefined = d.help;
  // @ts-expect-error severities are lower case
  const bad: Severity = "ERROR";
  return [severity, where, start, end, line, help, d.rendered, d.code, d.field, bad].join(" ");
}

export function useExpression(): unknown {
  const options: ExpressionOptions = { kind: "variable", kubernetesVersion: "1.30" };
  const r: ExpressionResult = evaluateExpression("object.spec.replicas * 2", { object: "spec: {replicas: 2}" }, options);
  const alone: ExpressionResult = evaluateExpression("1 == 1");
  const type: string | undefined = r.type;
  const cost: number | undefined = r.cost;
  const diagnostics: Diagnostic[] = [...r.diagnostics, ...alone.diagnostics];
  // @ts-expect-error unknown kind
  evaluateExpression("1", {}, { kind: "macro" });
  // @ts-expect-error the expression is a string
  evaluateExpression(1);
  return [r.value, type, cost, diagnostics];
}

export function usePolicySet(): number {
  const options: PolicySetOptions = { kubernetesVersion: "1.33" };
  const set = new PolicySet(manifests, options);
  const defaults = new PolicySet([manifests, object]);
  try {
    const diagnostics: Diagnostic[] = set.diagnostics;
    const v: string = set.kubernetesVersion;
    const request: RequestDocuments = { object, oldObject: object, request: { operation: "UPDATE" } };
    const r: EvaluateResult = set.evaluate(request);
    // @ts-expect-error only object, oldObject and request
    set.evaluate({ manifests });
    // @ts-expect-error read-only
    set.diagnostics = [];
    return diagnostics.length + v.length + r.policies.length + defaults.diagnostics.length;
  } finally {
    set.free();
    defaults.free();
  }
}

export function useTypecheck(): string {
  const r: TypecheckResult = typecheck({ manifests });
  const versions: string[] = supportedVersions();
  return `${version()} ${r.kubernetesVersion} ${r.diagnostics.length} ${versions.join()}`;
}

export function useTypeChecking(schemaText: string): string {
  loadSchemas("1.35", schemaText);
  loadSchemaDescriptions("1.35", "{}");
  const r: TypecheckResult = typecheck({ manifests, schemas: { "example.com/v1/Widget": { type: "object" } } });
  const warnings: ExpressionWarning[] = r.policies[0]?.typeChecking.expressionWarnings ?? [];
  const kinds: string[] = r.policies[0]?.checkedKinds ?? [];
  const options: ExpressionOptions = { objectKind: "apps/v1/Deployment" };
  const c: CompletionResult = completeExpression("object.spec.", 12, { object }, options);
  const inManifests: CompletionResult = complete({ manifests }, 3);
  const item: CompletionItem | undefined = c.items[0] ?? inManifests.items[0];
  const h: HoverResult = hover({ manifests }, 3);
  const he: HoverResult = hoverExpression("object.spec", 2, null, options);
  const t: string | undefined = h.type ?? he.type;
  const e: ExpressionResult = evaluateExpression("object", {}, { objectSchema: { type: "object" } });
  // @ts-expect-error the position is a number
  completeExpression("object.", "7");
  // @ts-expect-error objectKind is "<apiVersion>/<Kind>"
  evaluateExpression("object", {}, { objectKind: { kind: "Pod" } });
  return [warnings.map((w) => w.fieldRef + w.warning).join(), kinds.join(), item?.label, item?.kind, c.from, c.to, t, h.documentation, e.type].join(" ");
}
