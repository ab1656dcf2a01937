<?php
/**
 * Control: whether a response may be cached, for how long, and its tags.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Sends X-LiteSpeed-Cache-Control and X-LiteSpeed-Tag on front-end pages
 * and REST responses, and no-cache on the login page and the admin.
 *
 * Front-end pages are buffered from template_redirect on, so the headers
 * are decided after the page rendered: the tags then include every post
 * shown, and a page that created a nonce for an anonymous visitor (a form
 * not in an ESI block) is not cached.
 */
class Control {

	/** Response header with the cache policy. */
	const HEADER = 'X-LiteSpeed-Cache-Control';

	/**
	 * Settings.
	 *
	 * @var Settings
	 */
	private $settings;

	/**
	 * Tags.
	 *
	 * @var Tags
	 */
	private $tags;

	/**
	 * The current request.
	 *
	 * @var Request
	 */
	private $request;

	/**
	 * ESI blocks of this page.
	 *
	 * @var Esi
	 */
	private $esi;

	/**
	 * Post ids rendered on the page, as keys.
	 *
	 * @var array<int, true>
	 */
	private $shown = array();

	/**
	 * Nonce actions created for an anonymous visitor while the page rendered.
	 *
	 * @var string[]
	 */
	private $nonces = array();

	/**
	 * Whether the headers were sent.
	 *
	 * @var bool
	 */
	private $done = false;

	/**
	 * Sends one header line (header() in production).
	 *
	 * @var callable
	 */
	private $send_header;

	/**
	 * Cache control for one request.
	 *
	 * @param Settings $settings    Settings.
	 * @param Tags     $tags        Tags.
	 * @param Request  $request     The request.
	 * @param Esi      $esi         ESI blocks.
	 * @param callable $send_header Sends a header line; defaults to header().
	 */
	public function __construct( Settings $settings, Tags $tags, Request $request, Esi $esi, $send_header = null ) {
		$this->settings    = $settings;
		$this->tags        = $tags;
		$this->request     = $request;
		$this->esi         = $esi;
		$this->send_header = $send_header ? $send_header : 'header';
	}

	/**
	 * Hooks into WordPress.
	 */
	public function register() {
		add_action( 'template_redirect', array( $this, 'start_page' ), 2 );
		add_action( 'the_post', array( $this, 'post_shown' ) );
		add_filter( 'nonce_user_logged_out', array( $this, 'nonce_created' ), 10, 2 );
		add_filter( 'rest_post_dispatch', array( $this, 'rest_response' ), 10, 3 );
		add_action( 'login_init', array( $this, 'send_no_cache' ) );
		add_action( 'admin_init', array( $this, 'send_no_cache' ) );
	}

	/**
	 * Starts buffering a front-end page (not an ESI fragment, which Esi answers).
	 */
	public function start_page() {
		if ( $this->esi->is_fragment_request() || headers_sent() ) {
			return;
		}
		ob_start( array( $this, 'finish_page' ) );
	}

	/**
	 * Output handler: sends the headers once, before the first byte.
	 *
	 * @param string $html Buffered output.
	 * @return string The output, unchanged.
	 */
	public function finish_page( $html ) {
		if ( $this->done || headers_sent() ) {
			return $html;
		}
		$this->done = true;
		$kind       = $this->page_kind( (int) http_response_code() );
		$reason     = $this->reason_not_cacheable( $kind, (int) http_response_code(), $this->nonces_in( $html ) );
		$this->send( $reason ? 0 : $this->settings->ttl( $kind ), $reason ? array() : $this->tags->for_page( array_keys( $this->shown ) ) );
		if ( $reason ) {
			call_user_func( $this->send_header, 'X-Ramjet-Cache-Reason: ' . $reason, true );
		}
		return $html;
	}

	/**
	 * The actions of the nonces made for a logged-out visitor during this
	 * request whose value the page contains. WordPress makes some nonces
	 * while registering scripts it may never print (wp_rest), so making a
	 * nonce alone does not make a page uncacheable; printing it does.
	 *
	 * @param string $html Page.
	 * @return string[]
	 */
	private function nonces_in( $html ) {
		$found   = array();
		$actions = array_unique( $this->nonces );
		foreach ( $actions as $action ) {
			$nonce = wp_create_nonce( $action );
			if ( '' !== $nonce && false !== strpos( $html, $nonce ) ) {
				$found[] = $action;
			}
		}
		return $found;
	}

	/**
	 * Remembers a post rendered on the page (the_post).
	 *
	 * @param \WP_Post $post Post.
	 */
	public function post_shown( $post ) {
		if ( is_object( $post ) && isset( $post->ID ) ) {
			$this->shown[ (int) $post->ID ] = true;
		}
	}

	/**
	 * Notes a nonce made for a logged-out visitor (nonce_user_logged_out);
	 * returns the user id unchanged.
	 *
	 * @param int    $uid    User id (0).
	 * @param string $action Nonce action.
	 * @return int
	 */
	public function nonce_created( $uid, $action ) {
		$this->nonces[] = (string) $action;
		return $uid;
	}

	/**
	 * Adds cache headers to REST responses: GET, anonymous, 200.
	 *
	 * @param \WP_HTTP_Response $response Response.
	 * @param \WP_REST_Server   $server   Server.
	 * @param \WP_REST_Request  $request  Request.
	 * @return \WP_HTTP_Response
	 */
	public function rest_response( $response, $server, $request ) {
		$ttl = $this->settings->ttl( 'rest' );
		if ( 'GET' !== $request->get_method() || is_user_logged_in() || 200 !== $response->get_status() || $this->excluded_request() ) {
			$ttl = 0;
		}
		if ( ! $ttl ) {
			$response->header( self::HEADER, 'no-cache' );
			return $response;
		}
		$data = $response->get_data();
		$ids  = array();
		if ( is_array( $data ) && preg_match( '#^/wp/v2/(posts|pages)#', (string) $request->get_route() ) ) {
			foreach ( isset( $data['id'] ) ? array( $data ) : $data as $item ) {
				if ( is_array( $item ) && isset( $item['id'] ) ) {
					$ids[] = (int) $item['id'];
				}
			}
		}
		$response->header( self::HEADER, 'public,max-age=' . $ttl );
		$response->header( 'X-LiteSpeed-Tag', implode( ',', $this->tags->for_rest( $ids ) ) );
		return $response;
	}

	/**
	 * Marks the response uncacheable (login page, admin).
	 */
	public function send_no_cache() {
		if ( ! headers_sent() ) {
			call_user_func( $this->send_header, self::HEADER . ': no-cache', true );
		}
	}

	/**
	 * The page kind whose TTL applies, or '' for none.
	 *
	 * @param int $status HTTP status.
	 * @return string
	 */
	public function page_kind( $status ) {
		if ( 404 === $status || is_404() ) {
			return '404';
		}
		$checks = array(
			'feed'    => 'is_feed',
			'search'  => 'is_search',
			'front'   => 'is_front_page',
			'home'    => 'is_home',
			'page'    => 'is_page',
			'post'    => 'is_singular',
			'archive' => 'is_archive',
		);
		foreach ( $checks as $kind => $check ) {
			if ( call_user_func( $check ) ) {
				return $kind;
			}
		}
		return get_query_var( 'sitemap' ) ? 'archive' : '';
	}

	/**
	 * Why the current page must not be cached, or '' when it may be.
	 *
	 * @param string   $kind   Page kind from page_kind().
	 * @param int      $status HTTP status.
	 * @param string[] $nonces Nonce actions whose nonce is in the page.
	 * @return string
	 */
	public function reason_not_cacheable( $kind, $status, array $nonces = array() ) {
		$reason = '';
		if ( '' === $kind || 0 === $this->settings->ttl( $kind ) ) {
			$reason = 'ttl';
		} elseif ( 200 !== $status && 404 !== $status ) {
			$reason = 'status';
		} elseif ( ! in_array( $this->request->method(), array( 'GET', 'HEAD' ), true ) ) {
			$reason = 'method';
		} elseif ( defined( 'DONOTCACHEPAGE' ) && constant( 'DONOTCACHEPAGE' ) ) {
			$reason = 'donotcachepage';
		} elseif ( is_user_logged_in() ) {
			$reason = 'logged-in';
		} elseif ( is_preview() || is_customize_preview() ) {
			$reason = 'preview';
		} elseif ( is_singular() && post_password_required() ) {
			$reason = 'password';
		} elseif ( $this->is_shop_private() ) {
			$reason = 'shop';
		} elseif ( $this->excluded_request() ) {
			$reason = 'excluded';
		} elseif ( $nonces ) {
			$reason = 'nonce:' . implode( '|', $nonces );
		}
		/**
		 * Filters why the page must not be cached ('' = cacheable).
		 *
		 * @param string $reason Reason, or ''.
		 * @param string $kind   Page kind.
		 */
		return (string) apply_filters( 'ramjet_cache_not_cacheable', $reason, $kind );
	}

	/**
	 * Whether the path, query or a cookie excludes this request.
	 *
	 * @return bool
	 */
	private function excluded_request() {
		foreach ( (array) $this->settings->get( 'exclude_paths' ) as $pattern ) {
			if ( 0 === strpos( $this->request->path(), $pattern ) || fnmatch( $pattern, $this->request->path() ) ) {
				return true;
			}
		}
		$query = (string) wp_parse_url( $this->request->uri(), PHP_URL_QUERY );
		if ( preg_match( '/(^|&)(replytocom|unapproved|moderation-hash|preview|ramjet_nocache)=/', $query ) ) {
			return true;
		}
		foreach ( $this->request->cookie_names() as $name ) {
			foreach ( (array) $this->settings->get( 'exclude_cookies' ) as $pattern ) {
				if ( $name === $pattern || fnmatch( $pattern, $name ) ) {
					return true;
				}
			}
		}
		return false;
	}

	/**
	 * WooCommerce cart, checkout and account pages, when WooCommerce is active.
	 *
	 * @return bool
	 */
	private function is_shop_private() {
		foreach ( array( 'is_cart', 'is_checkout', 'is_account_page' ) as $check ) {
			if ( function_exists( $check ) && call_user_func( $check ) ) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Sends the cache headers: public with a TTL and tags, or no-cache;
	 * esi=on when the page has ESI blocks; a cookie vary for the
	 * excluded cookies, so their holders get their own (uncached) copy.
	 *
	 * @param int      $ttl  Seconds; 0 for no-cache.
	 * @param string[] $tags Tags.
	 */
	private function send( $ttl, array $tags ) {
		$value = $ttl > 0 ? 'public,max-age=' . $ttl : 'no-cache';
		if ( $this->esi->used() ) {
			$value .= ',esi=on';
		}
		call_user_func( $this->send_header, self::HEADER . ': ' . $value, true );
		if ( $ttl > 0 && $tags ) {
			call_user_func( $this->send_header, 'X-LiteSpeed-Tag: ' . implode( ',', $tags ), true );
		}
		$vary = array();
		foreach ( (array) $this->settings->get( 'exclude_cookies' ) as $name ) {
			if ( preg_match( '/^[A-Za-z0-9_.-]+$/', $name ) ) {
				$vary[] = 'cookie=' . $name;
			}
		}
		if ( $ttl > 0 && $vary ) {
			call_user_func( $this->send_header, 'X-LiteSpeed-Vary: ' . implode( ',', $vary ), true );
		}
	}
}
