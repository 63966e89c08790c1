package providers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
)

// The environment variables of the AWS SDK's default credential chain that decide whether
// a bedrock provider without static credentials uses the chain (see awsDefaultChain).
const (
	EnvAWSProfile                         = "AWS_PROFILE"
	EnvAWSDefaultProfile                  = "AWS_DEFAULT_PROFILE"
	EnvAWSConfigFile                      = "AWS_CONFIG_FILE"
	EnvAWSSharedCredentialsFile           = "AWS_SHARED_CREDENTIALS_FILE"
	EnvAWSWebIdentityTokenFile            = "AWS_WEB_IDENTITY_TOKEN_FILE"
	EnvAWSRoleARN                         = "AWS_ROLE_ARN"
	EnvAWSContainerCredentialsRelativeURI = "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"
	EnvAWSContainerCredentialsFullURI     = "AWS_CONTAINER_CREDENTIALS_FULL_URI"
)

// awsChain is what awsDefaultChain found: the chain's credentials provider (nil when there
// is no evidence of AWS credentials, or they cannot be used), where it takes them from, the
// profile's region, and why it cannot be used ("" when it can).
type awsChain struct {
	creds   aws.CredentialsProvider
	source  string
	region  string
	problem string
}

// awsDefaultChain is the AWS SDK's default credential chain (aws-sdk-go-v2/config: a
// profile of the shared config and credentials files, with its SSO, assumed role or
// credential_process; web identity; ECS/EKS container credentials; the EC2 instance role)
// for a bedrock provider without static credentials — but only where there is evidence of
// AWS credentials, so that a machine without AWS does not report bedrock as configured and
// send its requests to a failing credentials lookup. Evidence is: a profile named (the
// entry's aws_profile_name, else AWS_PROFILE, else AWS_DEFAULT_PROFILE, the SDK's order) that holds credentials (else the SDK falls
// through to the instance role, which needs instanceRole); a shared config or credentials file whose
// profile (else "default") holds credentials of some kind (keys, role_arn, sso_*,
// credential_process, web_identity_token_file, credential_source); web identity variables
// (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN); container variables
// (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI); or instanceRole, the config
// file's explicit opt-in for the EC2 instance role, which nothing in the environment
// shows.
//
// Only files are read here: credentials are retrieved at the first call, cached and
// refreshed before they expire by the SDK (aws.CredentialsCache). The file paths and the
// evidence come through getenv (HOME for the default files); the SDK itself reads the
// process environment, which is the same in serve.
func awsDefaultChain(ctx context.Context, getenv func(string) string, profile string, instanceRole bool) awsChain {
	explicit := profile != ""
	if !explicit {
		profile = strings.TrimSpace(getenv(EnvAWSProfile))
		if profile == "" {
			profile = strings.TrimSpace(getenv(EnvAWSDefaultProfile))
		}
	}
	configFile, credsFile := awsSharedFiles(getenv)
	webIdentity := getenv(EnvAWSWebIdentityTokenFile) != "" && getenv(EnvAWSRoleARN) != ""
	container := ""
	for _, v := range []string{EnvAWSContainerCredentialsFullURI, EnvAWSContainerCredentialsRelativeURI} {
		if getenv(v) != "" {
			container = v
			break
		}
	}

	var source string
	var region string
	name := profile
	if name == "" {
		name = "default"
	}
	sc, err := awsconfig.LoadSharedConfigProfile(ctx, name, func(o *awsconfig.LoadSharedConfigOptions) {
		o.ConfigFiles, o.CredentialsFiles = existing(configFile), existing(credsFile)
	})
	switch {
	case profile != "" && err != nil:
		return awsChain{problem: fmt.Sprintf("AWS profile %q: %v", profile, err)}
	case profile != "" && !awsProfileHasCredentials(sc) && !(webIdentity && !explicit) && container == "" && !instanceRole:
		// The SDK would fall through to the EC2 instance role, which needs the opt-in.
		return awsChain{problem: fmt.Sprintf("AWS profile %q holds no credentials (keys, SSO, role_arn or credential_process)", profile)}
	case profile != "":
		source, region = fmt.Sprintf("AWS profile %q", profile), sc.Region
	case webIdentity:
		source = "web identity (" + EnvAWSWebIdentityTokenFile + " and " + EnvAWSRoleARN + ")"
	case err == nil && awsProfileHasCredentials(sc):
		source, region = `AWS profile "default" (shared config files)`, sc.Region
	case container != "":
		source = "container credentials (" + container + ")"
	case instanceRole:
		source = "EC2 instance role (instance metadata)"
	default:
		return awsChain{}
	}
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithSharedConfigFiles(existing(configFile)),
		awsconfig.WithSharedCredentialsFiles(existing(credsFile)),
	}
	if explicit {
		opts = append(opts, awsconfig.WithSharedConfigProfile(profile))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return awsChain{problem: fmt.Sprintf("%s: %v", source, err)}
	}
	if region == "" {
		region = cfg.Region
	}
	return awsChain{creds: cfg.Credentials, source: source, region: region}
}

// awsSharedFiles are the shared config and credentials files: AWS_CONFIG_FILE and
// AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/config and ~/.aws/credentials ("" without a home).
func awsSharedFiles(getenv func(string) string) (configFile, credsFile string) {
	home := getenv("HOME")
	if runtime.GOOS == "windows" && home == "" {
		home = getenv("USERPROFILE")
	}
	configFile, credsFile = getenv(EnvAWSConfigFile), getenv(EnvAWSSharedCredentialsFile)
	if configFile == "" && home != "" {
		configFile = filepath.Join(home, ".aws", "config")
	}
	if credsFile == "" && home != "" {
		credsFile = filepath.Join(home, ".aws", "credentials")
	}
	return configFile, credsFile
}

// existing is []string{path} when path names a file, else none (the SDK then reads no
// default file in its place).
func existing(path string) []string {
	if path == "" {
		return []string{}
	}
	if fi, err := os.Stat(path); err != nil || fi.IsDir() {
		return []string{}
	}
	return []string{path}
}

// awsProfileHasCredentials reports whether a profile of the shared files holds
// credentials of some kind, or the means to get them.
func awsProfileHasCredentials(sc awsconfig.SharedConfig) bool {
	return sc.Credentials.HasKeys() || sc.RoleARN != "" || sc.CredentialProcess != "" || sc.SSOSessionName != "" ||
		sc.SSOStartURL != "" || sc.WebIdentityTokenFile != "" || sc.CredentialSource != "" || sc.LoginSession != ""
}
