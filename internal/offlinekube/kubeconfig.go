package offlinekube

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for identity name (a key of identities) with the CA and the
// client certificate embedded, so that the file alone is enough to reach the cluster.
func writeKubeconfig(path, server string, certs *pki, name string) error {
	config := clientcmdapi.NewConfig()
	config.Clusters["testcluster"] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: certs.caCertPEM,
	}
	config.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: certs.clientCertPEMs[name],
		ClientKeyData:         certs.clientKeyPEMs[name],
	}
	config.Contexts["testcluster"] = &clientcmdapi.Context{Cluster: "testcluster", AuthInfo: name}
	config.CurrentContext = "testcluster"
	return clientcmd.WriteToFile(*config, path)
}
