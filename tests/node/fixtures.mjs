// Result objects shaped per docs/result-format.md, for the playground unit tests. They describe
// the replica-limit example (www/examples/replica-limit*.yaml) with replicas 50 and 4.

const policy = 'replica-limit.example.com';
const denyBinding = 'replica-limit-deny.example.com';
const warnBinding = 'replica-limit-warn.example.com';
const expression = 'object.spec.replicas <= int(params.data.maxReplicas)';
const messageExpression = "'spec.replicas is ' + string(object.spec.replicas) + ', the limit is ' + string(params.data.maxReplicas)";

const request = {
  operation: 'CREATE',
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  subResource: '',
  name: 'nginx',
  namespace: 'default',
  userInfo: { username: 'alice@example.com', groups: ['developers', 'system:authenticated'] },
  dryRun: false,
};

function evaluation(replicas, limit, actions, message = `spec.replicas is ${replicas}, the limit is ${limit}`) {
  const ok = replicas <= limit;
  return {
    param: { namespace: 'policy-config', name: limit === 5 ? 'replica-limit-hard' : 'replica-limit-soft' },
    matchConditions: [],
    matched: true,
    variables: [],
    validations: [
      {
        index: 0,
        expression,
        result: ok,
        decision: ok ? 'admit' : 'deny',
        ...(ok ? {} : { message, reason: 'Invalid' }),
        messageExpression: { expression: messageExpression, evaluated: true, value: message, type: 'string', cost: 6 },
        actions: ok ? [] : actions,
        firstDenial: !ok && actions.includes('Deny'),
        cost: 5,
      },
    ],
    auditAnnotations: [{ key: 'replicas', valueExpression: "'replicas=' + string(object.spec.replicas)", value: `replicas=${replicas}`, published: true, cost: 3 }],
    cost: { matchConditions: 0, validations: 11, auditAnnotations: 3 },
  };
}

function policies(replicas, denyMessage, warnMessage) {
  return [
    {
      name: policy,
      matched: true,
      reason: 'resource rules match',
      bindings: [
        { name: denyBinding, matched: true, reason: 'no matchResources', validationActions: ['Deny'], evaluations: [evaluation(replicas, 5, ['Deny'], denyMessage)] },
        { name: warnBinding, matched: true, reason: 'no matchResources', validationActions: ['Warn', 'Audit'], evaluations: [evaluation(replicas, 3, ['Warn', 'Audit'], warnMessage)] },
      ],
    },
    { name: 'zz-unrelated.example.com', matched: false, reason: 'resource rules do not match', bindings: [] },
  ];
}

/** replicas 50: denied by the Deny binding, warned and audited by the other. */
export function deniedResult(denyMessage = 'spec.replicas is 50, the limit is 5', warnMessage = 'spec.replicas is 50, the limit is 3') {
  const inner = `ValidatingAdmissionPolicy '${policy}' with binding '${denyBinding}' denied request: ${denyMessage}`;
  return {
    response: {
      allowed: false,
      status: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `deployments.apps "nginx" is forbidden: ${inner}`,
        reason: 'Invalid',
        code: 422,
        details: { name: 'nginx', group: 'apps', kind: 'deployments', causes: [{ message: inner }] },
      },
      warnings: [`Validation failed for ValidatingAdmissionPolicy '${policy}' with binding '${warnBinding}': ${warnMessage}`],
      auditAnnotations: {
        [`${policy}/replicas`]: 'replicas=50',
        'validation.policy.admission.k8s.io/validation_failure': JSON.stringify([
          { message: warnMessage, policy, binding: warnBinding, expressionIndex: 0, validationActions: ['Warn', 'Audit'] },
        ]),
      },
    },
    request,
    policies: policies(50, denyMessage, warnMessage),
    diagnostics: [],
    kubernetesVersion: '1.37',
  };
}

/** replicas 4: allowed, with a warning and audit annotations. */
export function allowedWithWarningsResult() {
  const warnMessage = 'spec.replicas is 4, the limit is 3';
  return {
    response: {
      allowed: true,
      warnings: [`Validation failed for ValidatingAdmissionPolicy '${policy}' with binding '${warnBinding}': ${warnMessage}`],
      auditAnnotations: {
        [`${policy}/replicas`]: 'replicas=4',
        'validation.policy.admission.k8s.io/validation_failure': JSON.stringify([
          { message: warnMessage, policy, binding: warnBinding, expressionIndex: 0, validationActions: ['Warn', 'Audit'] },
        ]),
      },
    },
    request,
    policies: policies(4, undefined, warnMessage),
    diagnostics: [],
    kubernetesVersion: '1.37',
  };
}

/** The type-error example: a compile error in a validation and in an audit valueExpression. */
export const typeErrorManifests = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: name-length.example.com
spec:
  validations:
  - expression: "size(object.metadata.name) <= '30'"
  auditAnnotations:
  - key: configmap-name
    valueExpression: "object.metadata.name"
`;

export const typeErrorDiagnostics = [
  {
    severity: 'warning',
    code: 'schema-type',
    message: 'just a warning',
    field: '',
    rendered: 'WARNING: just a warning',
  },
  {
    severity: 'error',
    code: 'cel-compile',
    message: "found no matching overload for '_<=_' applied to '(int, string)'",
    field: 'ValidatingAdmissionPolicy/name-length.example.com: spec.validations[0].expression',
    source: { kind: 'expression', expression: "size(object.metadata.name) <= '30'" },
    start: 27,
    end: 29,
    line: 1,
    column: 28,
    endLine: 1,
    endColumn: 30,
    rendered:
      "ERROR: ValidatingAdmissionPolicy/name-length.example.com: spec.validations[0].expression:1:28: found no matching overload for '_<=_' applied to '(int, string)'\n | size(object.metadata.name) <= '30'\n | ...........................^",
  },
];
