/**
 * The pod of one attempt of a Job this controller runs (pure): the Job's pod template as the API
 * server stored it (with the `batch.kubernetes.io/job-name` and controller-uid labels it added),
 * owned by the Job as its controller, so `kubectl get pods -l batch.kubernetes.io/job-name=…`,
 * `kubectl logs job/…` and garbage collection treat it as the Job controller's own pod would be.
 * Unlike the Job controller's pods it carries no tracking finalizer: that finalizer lets the Job
 * controller count a pod that is deleted before it saw it finish; here a vanished pod is simply
 * run again (run-plan.ts), and saving the finalizer's removal is one write per stage.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { nameOf } from '../../api/object-meta.js';

export const jobPodName = (jobName: string, attempt: number): string => `${jobName}-${attempt}`;

/** True when `job` carries its pod template (the informer's copy does not: cached-objects.ts). */
export function hasPodTemplate(job: V1Job): boolean {
  return (job.spec?.template?.spec?.containers?.length ?? 0) > 0;
}

export function buildJobPod(job: V1Job, attempt: number): V1Pod {
  const template = job.spec?.template;
  if (!template?.spec) throw new Error(`Job ${nameOf(job)} has no pod template to run`);
  const metadata = template.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: jobPodName(nameOf(job), attempt),
      namespace: job.metadata?.namespace,
      ...(metadata.labels ? { labels: metadata.labels } : {}),
      ...(metadata.annotations ? { annotations: metadata.annotations } : {}),
      ownerReferences: [
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          name: nameOf(job),
          uid: job.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: template.spec,
  };
}
