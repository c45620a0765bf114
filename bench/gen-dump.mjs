// Writes a synthetic cluster dump for `vap-eval audit` (bench/audit.sh): N objects of mixed
// kinds (Deployments, StatefulSets, Pods, ConfigMaps, Services, Namespaces) as JSON lines,
// the shape `kubectl get -A -o json | jq -c '.items[]'` gives. Deterministic (seeded), so runs
// compare. Usage: node bench/gen-dump.mjs [N=100000] > dump.jsonl
const n = Number(process.argv[2] ?? 100000);
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = (a) => a[Math.floor(rand() * a.length)];
const namespaces = Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? `prod-${i}` : `team-${i}`));
const registries = ["registry.example.com", "docker.io/library", "ghcr.io/acme", "quay.io/org"];
const images = ["nginx", "redis", "postgres", "api", "worker", "frontend"];

function meta(kind, i, ns) {
  const labels = { app: `${kind.toLowerCase()}-${i % 97}` };
  if (rand() < 0.7) labels.team = pick(["a", "b", "c"]);
  if (rand() < 0.5) labels.env = ns.startsWith("prod") ? "production" : "dev";
  return {
    name: `${kind.toLowerCase()}-${i}`,
    namespace: ns,
    uid: `00000000-0000-0000-0000-${String(i).padStart(12, "0")}`,
    resourceVersion: String(100000 + i),
    creationTimestamp: "2026-01-01T00:00:00Z",
    labels,
    annotations: { "deployment.kubernetes.io/revision": String(1 + (i % 5)) },
  };
}

function container(i) {
  return {
    name: pick(images),
    image: `${pick(registries)}/${pick(images)}:${1 + (i % 9)}.${i % 13}`,
    ports: [{ containerPort: 8080, protocol: "TCP" }],
    resources: rand() < 0.8 ? { limits: { cpu: "500m", memory: "512Mi" }, requests: { cpu: "100m", memory: "128Mi" } } : {},
    securityContext: { runAsNonRoot: rand() < 0.8, allowPrivilegeEscalation: false },
    env: [{ name: "MODE", value: "production" }, { name: "INDEX", value: String(i) }],
  };
}

function podSpec(i) {
  const containers = [container(i)];
  if (rand() < 0.3) containers.push(container(i + 1));
  return { containers, restartPolicy: "Always", serviceAccountName: "default", priorityClassName: rand() < 0.1 ? "high" : undefined };
}

function object(i) {
  const ns = pick(namespaces);
  const r = rand();
  if (r < 0.3) {
    return { apiVersion: "apps/v1", kind: "Deployment", metadata: meta("Deployment", i, ns),
      spec: { replicas: Math.floor(rand() * 8), selector: { matchLabels: { app: `d-${i}` } },
        template: { metadata: { labels: { app: `d-${i}` } }, spec: podSpec(i) } },
      status: { replicas: 1, readyReplicas: 1 } };
  }
  if (r < 0.4) {
    return { apiVersion: "apps/v1", kind: "StatefulSet", metadata: meta("StatefulSet", i, ns),
      spec: { replicas: Math.floor(rand() * 5), serviceName: `s-${i}`, selector: { matchLabels: { app: `s-${i}` } },
        template: { metadata: { labels: { app: `s-${i}` } }, spec: podSpec(i) } } };
  }
  if (r < 0.7) {
    return { apiVersion: "v1", kind: "Pod", metadata: meta("Pod", i, ns), spec: podSpec(i), status: { phase: "Running" } };
  }
  if (r < 0.85) {
    return { apiVersion: "v1", kind: "ConfigMap", metadata: meta("ConfigMap", i, ns),
      data: { "config.yaml": `key: ${i}\nother: ${rand()}`, mode: "fast" } };
  }
  if (r < 0.995) {
    return { apiVersion: "v1", kind: "Service", metadata: meta("Service", i, ns),
      spec: { type: "ClusterIP", selector: { app: `d-${i}` }, ports: [{ port: 80, targetPort: 8080, protocol: "TCP" }] } };
  }
  const name = pick(namespaces);
  return { apiVersion: "v1", kind: "Namespace", metadata: { name, labels: { "kubernetes.io/metadata.name": name } } };
}

const out = [];
for (let i = 0; i < n; i++) {
  out.push(JSON.stringify(object(i)));
  if (out.length === 1000) {
    process.stdout.write(out.join("\n") + "\n");
    out.length = 0;
  }
}
if (out.length) process.stdout.write(out.join("\n") + "\n");
