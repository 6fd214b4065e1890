// Every file generated from the install description: the kustomize base and the Helm chart.
import { renderGitopsFiles } from './gitops-files.js';
import { renderHelmChart } from './helm-chart.js';
import { renderKustomizeBase, type GeneratedFile } from './kustomize-base.js';

/** The generated install files (deploy/, charts/rtctl/ but its crds/, the GitOps health checks). */
export function generateInstallFiles(): GeneratedFile[] {
  return [...renderKustomizeBase(), ...renderHelmChart(), ...renderGitopsFiles()];
}
