/**
 * The command lines of the control plane's components (etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler, kwok): which flags each needs to run on loopback with our PKI. Pure, so
 * control-plane.ts reads as the start-up order alone.
 */
import { join } from 'node:path';
import { SANDBOX_NAMES } from '../api/names.js';
import type { Pki } from './pki.js';

export interface ControlPlanePorts {
  etcd: number;
  peer: number;
  api: number;
  kcm: number;
  scheduler: number;
  kwok: number;
}

/** Only writes, and only who/what/when (no bodies): enough to count an actor's API writes. */
export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`;

export function etcdArgs(runDir: string, ports: ControlPlanePorts): string[] {
  return [
    '--name=default',
    `--data-dir=${join(runDir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${ports.etcd}`,
    `--advertise-client-urls=http://127.0.0.1:${ports.etcd}`,
    `--listen-peer-urls=http://127.0.0.1:${ports.peer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${ports.peer}`,
    `--initial-cluster=default=http://127.0.0.1:${ports.peer}`,
    '--unsafe-no-fsync',
    '--quota-backend-bytes=4294967296',
    '--auto-compaction-retention=1',
    '--log-level=warn',
  ];
}

/** The audit flags for a policy file already written at `policyPath`. */
export function auditArgs(policyPath: string, auditLogPath: string): string[] {
  return [
    `--audit-policy-file=${policyPath}`,
    `--audit-log-path=${auditLogPath}`,
    '--audit-log-format=json',
    '--audit-log-maxsize=0',
  ];
}

export function apiserverArgs(
  runDir: string,
  ports: ControlPlanePorts,
  pki: Pki,
  extra: string[],
  verbosity: string,
): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${ports.etcd}`,
    `--cert-dir=${join(runDir, 'apiserver-certs')}`,
    `--tls-cert-file=${pki.servingCert}`,
    `--tls-private-key-file=${pki.servingKey}`,
    `--client-ca-file=${pki.caCert}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${ports.api}`,
    '--advertise-address=127.0.0.1',
    '--endpoint-reconciler-type=none',
    '--service-cluster-ip-range=10.96.0.0/16',
    '--authorization-mode=RBAC',
    '--allow-privileged=true',
    // Pods may name a ServiceAccount before its controller has made the namespace's default one.
    '--disable-admission-plugins=ServiceAccount',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    '--kubelet-preferred-address-types=InternalIP',
    `--kubelet-client-certificate=${pki.adminCert}`,
    `--kubelet-client-key=${pki.adminKey}`,
    ...extra,
    `--v=${verbosity}`,
  ];
}

/**
 * How simulated nodes heartbeat (kwok renews each node's Lease about every quarter of its duration,
 * as a kubelet does) and how long kube-controller-manager's node lifecycle controller lets a node's
 * heartbeat be late before it marks the node Unknown and taints it. Kubernetes' own defaults (40 s
 * leases, 50 s grace) when absent.
 */
export interface NodeHeartbeat {
  leaseDurationSeconds: number;
  nodeMonitorGracePeriodSeconds: number;
}

export const DEFAULT_NODE_LEASE_SECONDS = 40;
/** Kubernetes' default grace before a node whose heartbeat is late is marked Unknown (since 1.32). */
export const DEFAULT_NODE_MONITOR_GRACE_SECONDS = 50;

export function controllerManagerArgs(
  kubeconfigPath: string,
  ports: ControlPlanePorts,
  pki: Pki,
  verbosity: string,
  heartbeat?: NodeHeartbeat,
): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${ports.kcm}`,
    '--controllers=job-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,' +
      'pod-garbage-collector-controller,ttl-after-finished-controller,disruption-controller,' +
      'node-lifecycle-controller,root-ca-certificate-publisher-controller,deployment-controller,replicaset-controller,daemonset-controller,' +
      // The viewer/editor roles join view, edit and admin through aggregation, as on any cluster.
      'clusterrole-aggregation-controller',
    `--root-ca-file=${pki.caCert}`,
    `--service-account-private-key-file=${pki.serviceAccountKey}`,
    '--kube-api-qps=200',
    '--kube-api-burst=400',
    ...(heartbeat ? [`--node-monitor-grace-period=${heartbeat.nodeMonitorGracePeriodSeconds}s`] : []),
    `--v=${verbosity}`,
  ];
}

export function schedulerArgs(kubeconfigPath: string, ports: ControlPlanePorts, verbosity: string): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${ports.scheduler}`,
    `--v=${verbosity}`,
  ];
}

export function kwokArgs(
  kubeconfigPath: string,
  kwokConfig: string,
  ports: ControlPlanePorts,
  pki: Pki,
  verbosity: string,
  heartbeat?: NodeHeartbeat,
): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--config=${kwokConfig}`,
    // Only the simulated nodes: real nodes (sandbox/real-node/) have kubelets of their own.
    '--manage-all-nodes=false',
    `--manage-nodes-with-annotation-selector=${SANDBOX_NAMES.simulatedNodeAnnotation}=fake`,
    '--node-ip=127.0.0.1',
    `--node-port=${ports.kwok}`,
    `--server-address=127.0.0.1:${ports.kwok}`,
    `--tls-cert-file=${pki.servingCert}`,
    `--tls-private-key-file=${pki.servingKey}`,
    '--cidr=10.244.0.0/16',
    `--node-lease-duration-seconds=${heartbeat?.leaseDurationSeconds ?? DEFAULT_NODE_LEASE_SECONDS}`,
    `--v=${verbosity}`,
  ];
}
