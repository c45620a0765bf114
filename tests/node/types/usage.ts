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
  ObjectChange,
  ChangeReason,
  ExpressionOptions,
  ExpressionResult,
  KyvernoResult,
  KyvernoRuleResult,
  ParamEvaluation,
  PolicySetOptions,
  PolicyTrace,
  RequestDocuments,
  Severity,
  SourceRef,
  Status,
  TypecheckResult,
  ValidationResult,
  WebhookTrace,
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
  const halfSetup: EvaluateResult = evaluate({ manifests, object, unboundPolicies: "preview", missingNamespaces: "strict" });
  const hypothetical: boolean | undefined = halfSetup.policies[0]?.bindings[0]?.hypothetical;
  // @ts-expect-error unboundPolicies is a closed set
  evaluate({ manifests, unboundPolicies: "yes" });
  const asGiven: EvaluateResult = evaluate({ manifests, object, objectsAsGiven: true });
  const change: ObjectChange | undefined = r.objectChanges?.[0] ?? asGiven.objectChanges?.[0];
  const why: ChangeReason | undefined = change?.reason;
  // @ts-expect-error the reasons are a closed set
  const badWhy: "renamed" | undefined = change?.reason;
  // @ts-expect-error unknown input field
  evaluate({ manifest: manifests });
  // @ts-expect-error manifests must be text or a list of documents
  evaluate({ manifests: 5 });
  // @ts-expect-error decision is a closed set
  const wrong: "allow" | undefined = validation?.decision;
  return [String(allowed), String(code), String(kind), Object.keys(annotations).join(), String(operation), String(groups), String(decision), String(value), String(cost), String(wrong), String(hypothetical), String(why), String(badWhy), String(change?.path)];
}

export function useWebhooks(r: EvaluateResult): string[] {
  const hooks: WebhookTrace[] = r.webhooks;
  const first: WebhookTrace | undefined = hooks[0];
  const kind: "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" | undefined = first?.kind;
  const called: boolean | undefined = first?.called;
  const reason: string | undefined = first?.reason;
  const rule: number | undefined = first?.matchedRule;
  const version: string | undefined = first?.equivalentResource?.resource.version;
  const condition: boolean | undefined = first?.matchConditions[0]?.result;
  const review: Record<string, unknown> | undefined = first?.review;
  // @ts-expect-error kind is a closed set
  const wrong: "Webhook" | undefined = first?.kind;
  return [String(kind), String(called), String(reason), String(rule), String(version), String(condition), String(review), String(wrong)];
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
  const options: PolicySetOptions = { kubernetesVersion: "1.33", unboundPolicies: "bind", missingNamespaces: "assume", objectsAsGiven: false };
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

// Kyverno results (docs/result-format.md): present only with Kyverno policies.
export function kyverno(r: EvaluateResult): string[] {
  const k: KyvernoResult | undefined = r.kyverno;
  if (!k) return [];
  const rule: KyvernoRuleResult | undefined = k.policies[0]?.rules[0];
  const result: "pass" | "fail" | "warn" | "error" | "skip" | undefined = rule?.result;
  // @ts-expect-error the result is one of Kyverno's five words, not any string
  const wrong: "passed" | undefined = rule?.result;
  const webhooks: string[] = k.webhooks.map((w) => `${w.name} ${w.allowed} ${w.reason ?? ""} ${w.matchConditions?.[0]?.result}`);
  const condition: boolean | undefined = k.policies[0]?.matchConditions?.[0]?.result;
  const allowed: boolean = k.response.allowed;
  return [String(result), String(wrong), ...webhooks, String(allowed), String(condition)];
}
