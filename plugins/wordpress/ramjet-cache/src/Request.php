<?php
/**
 * Request: what the plugin needs to know about the current request.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Facts about the current request, read from a server array and cookies
 * passed in (so tests build their own).
 */
class Request {

	/**
	 * Server variables ($_SERVER).
	 *
	 * @var array
	 */
	private $server;

	/**
	 * Cookies ($_COOKIE).
	 *
	 * @var array
	 */
	private $cookies;

	/**
	 * Whether this is a command line run (WP-CLI, a PHP script).
	 *
	 * @var bool
	 */
	private $cli;

	/**
	 * A request built from the given server variables and cookies.
	 *
	 * @param array $server  Server variables.
	 * @param array $cookies Cookies.
	 * @param bool  $cli     Command line run.
	 */
	public function __construct( array $server, array $cookies, $cli ) {
		$this->server  = $server;
		$this->cookies = $cookies;
		$this->cli     = (bool) $cli;
	}

	/**
	 * The request being served.
	 *
	 * @return self
	 */
	public static function current() {
		// phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- only compared and parsed, never output.
		return new self( $_SERVER, $_COOKIE, 'cli' === PHP_SAPI || defined( 'WP_CLI' ) );
	}

	/**
	 * A request header, or ''.
	 *
	 * @param string $name Header name, e.g. "X-LSCACHE".
	 * @return string
	 */
	public function header( $name ) {
		$key = 'HTTP_' . strtoupper( str_replace( '-', '_', $name ) );
		return isset( $this->server[ $key ] ) ? (string) $this->server[ $key ] : '';
	}

	/**
	 * The request method, upper case ("GET" on the command line).
	 *
	 * @return string
	 */
	public function method() {
		return isset( $this->server['REQUEST_METHOD'] ) ? strtoupper( (string) $this->server['REQUEST_METHOD'] ) : 'GET';
	}

	/**
	 * The request URI (path and query).
	 *
	 * @return string
	 */
	public function uri() {
		return isset( $this->server['REQUEST_URI'] ) ? (string) $this->server['REQUEST_URI'] : '/';
	}

	/**
	 * The request path, without the query.
	 *
	 * @return string
	 */
	public function path() {
		$path = wp_parse_url( $this->uri(), PHP_URL_PATH );
		return is_string( $path ) ? $path : '/';
	}

	/**
	 * Names of the cookies the client sent.
	 *
	 * @return string[]
	 */
	public function cookie_names() {
		return array_map( 'strval', array_keys( $this->cookies ) );
	}

	/**
	 * Whether this is a command line run: no response goes through ramjet.
	 *
	 * @return bool
	 */
	public function is_cli() {
		return $this->cli;
	}

	/**
	 * Whether ramjet (or another LSCache-speaking proxy) serves this
	 * request, so response headers reach it: "on"/"off" force it, "auto"
	 * looks for the request header X-LSCACHE (any value but "" and "0", as
	 * the LiteSpeed Cache plugin reads it) or a Surrogate-Capability that
	 * offers ESI.
	 *
	 * @param string $mode "auto", "on" or "off".
	 * @return bool
	 */
	public function behind_proxy( $mode ) {
		if ( $this->cli || 'off' === $mode ) {
			return false;
		}
		if ( 'on' === $mode ) {
			return true;
		}
		$lscache = trim( $this->header( 'X-LSCACHE' ) );
		if ( '' !== $lscache && '0' !== $lscache ) {
			return true;
		}
		return false !== stripos( $this->header( 'Surrogate-Capability' ), 'ESI/1.0' );
	}
}
