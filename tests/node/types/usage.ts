// Type-checked only (tsc --strict, never run): the package's types as a user writes against them.
// `@ts-expect-error` lines must stay errors: they pin that the declarations are not `any`.
import init, {
  evaluate,
  evaluateExpression,
  initSync,
  PolicySet,
  supportedVersions,
  typecheck,
  version,
} from "../../../pkg/vap_eval.js";
import type {
  AdmissionResponse,
  Diagnostic,
  Document,
  EvaluateInput,
  EvaluateResult,
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

// Kyverno results (docs/result-format.md): present only with Kyverno policies.
export function kyverno(r: EvaluateResult): string[] {
  const k: KyvernoResult | undefined = r.kyverno;
  if (!k) return [];
  const rule: KyvernoRuleResult | undefined = k.policies[0]?.rules[0];
  const result: "pass" | "fail" | "warn" | "error" | "skip" | undefined = rule?.result;
  // @ts-expect-error the result is one of Kyverno's five words, not any string
  const wrong: "passed" | undefined = rule?.result;
  const webhooks: string[] = k.webhooks.map((w) => `${w.name} ${w.allowed}`);
  const allowed: boolean = k.response.allowed;
  return [String(result), String(wrong), ...webhooks, String(allowed)];
}
