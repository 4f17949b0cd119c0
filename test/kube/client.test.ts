/**
 * The KubeClient contract (client-contract.ts) against the client-node implementation.
 */
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { kubeClientContract } from './client-contract.ts';

kubeClientContract('client-node', (server, identity, options) => createKubeClient(server.kubeConfig(identity), options));
