package licensing

import (
	"context"
	"errors"
	"net/http"
)

// UpdateRequest is what client software says about itself when it asks for an update. The
// license is its Key (with HWUID), or Token: a license token Verify answered (LicenseToken),
// which stands for its license and device; one of the two, never both.
type UpdateRequest struct {
	Key string `json:"key,omitempty"`
	// Token: a license token from Verify, in place of Key and HWUID.
	Token string `json:"token,omitempty"`
	AppID string `json:"appId"`
	// HWUID: the device id (MachineFingerprint), with Key; required when the license binds devices.
	HWUID string `json:"hwuid,omitempty"`
	// CurrentVersion: the version this software runs (semantic versioning).
	CurrentVersion string `json:"currentVersion"`
	// Channel: stable (""), rc, beta, alpha or dev; it also receives every more stable one.
	Channel string `json:"channel,omitempty"`
	// Platform and Arch: only releases with a file for them (or for every one).
	Platform string `json:"platform,omitempty"`
	Arch     string `json:"arch,omitempty"`
}

// Update is an offered release and its files for the platform and architecture.
type Update struct {
	Release struct {
		ID          string `json:"id"`
		Version     string `json:"version"`
		Channel     string `json:"channel"`
		Notes       string `json:"notes"`
		PublishedAt string `json:"publishedAt"`
	} `json:"release"`
	Artifacts []ReleaseFile `json:"artifacts"`
}

// ReleaseFile is one file of an offered release: an hour-long link to its bytes, and its signed
// manifest for VerifyArtifact ("" when the service signs nothing). For a file the seller hosts,
// Size and the digests are what the seller declared (0 and "" when they did not, and then no
// manifest), and the link redirects to the seller's address.
type ReleaseFile struct {
	Filename             string  `json:"filename"`
	Platform             *string `json:"platform"`
	Arch                 *string `json:"arch"`
	Filetype             string  `json:"filetype"`
	Size                 int64   `json:"size"`
	SHA256               string  `json:"sha256"`
	SHA512               string  `json:"sha512"`
	DownloadURL          string  `json:"downloadUrl"`
	DownloadURLExpiresAt string  `json:"downloadUrlExpiresAt"`
	Manifest             string  `json:"manifest"`
}

// CheckForUpdate is POST /releases/upgrade: the newest release this license may have past
// CurrentVersion, with its files; nil (and no error) when the software is up to date. The
// license is checked as verify checks it (a Token as introspection checks it, then its license
// as it is now); a refusal is an *Error (KindAPI) with its code (license_expired,
// channel_not_granted, device_limit_reached, token_expired…).
func (c *Client) CheckForUpdate(ctx context.Context, request UpdateRequest) (*Update, error) {
	if (request.Key == "") == (request.Token == "") {
		return nil, errors.New("licensing: Key or Token: one of the two is required, not both")
	}
	if request.AppID == "" || request.CurrentVersion == "" {
		return nil, errors.New("licensing: AppID and CurrentVersion: both are required")
	}
	var answer *Update
	if err := c.send(ctx, http.MethodPost, "/releases/upgrade", request, "", &answer); err != nil {
		return nil, err
	}
	return answer, nil
}
